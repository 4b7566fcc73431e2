import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { discoverApp, parseServerCard, remoteUrl } from './server-card';

const CARD = {
  $schema: 'https://static.modelcontextprotocol.io/schemas/server-card.json',
  name: 'io.example/weather',
  title: 'Weather',
  description: 'Forecasts',
  version: '1.2.0',
  remotes: [{ type: 'streamable-http', url: 'https://{region}.weather.example/mcp', headers: [{ name: 'X-Api-Key', isSecret: true, isRequired: true }], variables: { region: { default: 'eu', choices: ['eu', 'us'] } } }],
};

describe('Server Cards', () => {
  it('parses a card and fills a remote URL from values, defaults and fixed values', () => {
    const card = parseServerCard(CARD);
    expect(card).toMatchObject({ name: 'io.example/weather', title: 'Weather', version: '1.2.0' });
    expect(card.remotes[0]!.headers[0]).toEqual({ name: 'X-Api-Key', isSecret: true, isRequired: true });
    expect(remoteUrl(card.remotes[0]!, {})).toBe('https://eu.weather.example/mcp');
    expect(remoteUrl(card.remotes[0]!, { region: 'us' })).toBe('https://us.weather.example/mcp');
  });
  it('refuses a card with every problem named', () => {
    expect(() => parseServerCard({ name: '', remotes: [{ type: 'stdio', url: 'file:///x' }] })).toThrow(/name must be a non-empty string; remotes.0.type .*; remotes.0.url/);
  });

  describe('discoverApp', () => {
    let server: Server;
    let base: string;
    beforeAll(async () => {
      server = createServer((req, res) => {
        if (req.url === '/card') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(CARD));
        if (req.url === '/broken') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'x', remotes: [{}] }));
        res.writeHead(405).end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

    it('reads a card URL once', async () => {
      await expect(discoverApp(fetch, `${base}/card`)).resolves.toMatchObject({ card: true, serverCard: { name: 'io.example/weather' } });
    });
    it('takes a Streamable HTTP endpoint without a card as one bare remote', async () => {
      const found = await discoverApp(fetch, `${base}/mcp`);
      expect(found).toEqual({ card: false, serverCard: { name: new URL(base).host, title: null, description: null, version: null, remotes: [{ type: 'streamable-http', url: `${base}/mcp`, headers: [], variables: {} }] } });
    });
    it('refuses a broken card instead of guessing', async () => {
      await expect(discoverApp(fetch, `${base}/broken`)).rejects.toMatchObject({ reason: 'invalid_server' });
    });
  });
});
