/**
 * Runs s3rver (a real S3 protocol server) on 127.0.0.1 in its own process, so that its memory
 * never counts towards the process a test measures. Argument: the directory it stores under.
 * Prints `S3RVER http://127.0.0.1:<port>` once the bucket `openbot` exists; exits with its parent.
 */
const S3rver = require('s3rver');

const directory = process.argv[2];
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory,
  configureBuckets: [{ name: 'openbot' }],
});
server.run().then(
  (address) => process.stdout.write(`S3RVER http://127.0.0.1:${address.port}\n`),
  (error) => {
    process.stderr.write(`${error.stack}\n`);
    process.exit(1);
  },
);
process.on('disconnect', () => process.exit(0));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
