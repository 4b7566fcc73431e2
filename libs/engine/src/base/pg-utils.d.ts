/** pg's value mapping for Bind (`pg/lib/utils`, exported by pg's package map, untyped): what pg's own Query sends. */
declare module 'pg/lib/utils' {
  export function prepareValue(value: unknown): string | Buffer | null;
}
