// s3rver in a process of its own (test/support/s3-server.ts starts it): its
// ListObjectsV2 continuation tokens are DES-encrypted, which OpenSSL 3 has only
// in its legacy provider, so it runs with --openssl-legacy-provider while the
// tests themselves do not. Prints `{"port": N}` once listening; ends with stdin.
import S3rver from "s3rver";

const [directory, bucket] = process.argv.slice(2);
const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
const { port } = await server.run();
process.stdout.write(`${JSON.stringify({ port })}\n`);
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
