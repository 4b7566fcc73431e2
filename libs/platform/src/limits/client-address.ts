import { isIP } from 'node:net';

/**
 * The key a client address is limited under (docs/decisions/017): an IPv4 address as it is
 * (IPv4-mapped IPv6 unwrapped), an IPv6 address by its /64 network, since one subscriber
 * usually holds a whole /64 and could otherwise use a fresh address per request.
 */
export function clientKeyOf(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  const bare = address.split('%')[0]!;
  if (isIP(bare) !== 6) return address;
  const [head = '', tail] = bare.split('::');
  const groups = (part: string): string[] => (part === '' ? [] : part.split(':'));
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const full = tail === undefined ? front : [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back];
  return `${full
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
