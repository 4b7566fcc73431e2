import { clientKeyOf } from './client-address';

describe('clientKeyOf (the key per-address limits count under)', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:5:6::1', '2001:db8:5:6::/64'],
    ['2001:0db8:0005:0006:ffff:1:2:3', '2001:db8:5:6::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['', 'unknown'],
    [undefined, 'unknown'],
  ])('security: %s → %s', (address, key) => {
    expect(clientKeyOf(address)).toBe(key);
  });
});
