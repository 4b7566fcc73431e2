import { checkToolList, declare, decodeDeclaration, encodeDeclaration, isRepeatSafe, toolDigest } from './declaration';

const good = (name: string) => ({ name, description: 'd', inputSchema: { type: 'object', properties: { a: { type: 'string' } } } });

describe('checkToolList', () => {
  it('refuses a tool whose schema is not a JSON Schema object, and keeps the others', () => {
    const checked = checkToolList([good('a'), { name: 'b', inputSchema: 'nope' }, { name: 'c', inputSchema: { type: 'string' } }, { inputSchema: { type: 'object' } }, good('d')]);
    expect(checked.tools.map((t) => t.name)).toEqual(['a', 'd']);
    expect(checked.refused.map((r) => r.name)).toEqual(['b', 'c', '']);
    expect(checked.cutAt).toBeNull();
  });
  it('cuts a list over the cap and says where', () => {
    const checked = checkToolList(Array.from({ length: 10 }, (_, i) => good(`t${i}`)), 4);
    expect(checked.tools).toHaveLength(4);
    expect(checked.cutAt).toBe(4);
  });
  it('reads a View resource from _meta.ui.resourceUri (ui:// only)', () => {
    const checked = checkToolList([{ ...good('v'), _meta: { ui: { resourceUri: 'ui://widget/x.html' } } }, { ...good('w'), _meta: { ui: { resourceUri: 'https://x' } } }]);
    expect(checked.tools.map((t) => t.viewUri)).toEqual(['ui://widget/x.html', null]);
  });
});

describe('declarations', () => {
  it('[STC-07] the digest changes when the schema, description or hints change, and not with key order', () => {
    const base = { name: 'a', description: 'd', inputSchema: { type: 'object', properties: { x: { type: 'string' } } }, annotations: {} };
    expect(toolDigest(base)).toBe(toolDigest({ ...base, inputSchema: { properties: { x: { type: 'string' } }, type: 'object' } }));
    expect(toolDigest(base)).not.toBe(toolDigest({ ...base, description: 'e' }));
    expect(toolDigest(base)).not.toBe(toolDigest({ ...base, inputSchema: { type: 'object', properties: { x: { type: 'number' } } } }));
    expect(toolDigest(base)).not.toBe(toolDigest({ ...base, annotations: { readOnlyHint: true } }));
  });
  it('round-trips through the codec and refuses a document that is not a declaration', () => {
    const [tool] = checkToolList([{ ...good('a'), annotations: { idempotentHint: true } }]).tools;
    const declaration = declare(tool!, { id: 'c', revision: 3 }, 'a');
    expect(decodeDeclaration(encodeDeclaration(declaration))).toEqual(declaration);
    expect(() => decodeDeclaration({ name: 'a' })).toThrow('not a saved App tool declaration');
    expect(isRepeatSafe(declaration.annotations)).toBe(true);
    expect(isRepeatSafe({ destructiveHint: false })).toBe(false);
  });
});
