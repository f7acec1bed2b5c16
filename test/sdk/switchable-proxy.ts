import net from 'node:net';

/**
 * A TCP proxy in front of a test server that can be taken down and brought back on the same
 * port: down, connections are refused and open ones reset, exactly what a client sees of a
 * stopped service (or of a lost network), without the seconds a real restart costs. It can also
 * lose the answers: the request reaches the service, the client sees a reset connection.
 */
export async function switchableProxy(targetPort: number) {
  const sockets = new Set<net.Socket>();
  let cutAnswers = false;
  const listen = (port: number) =>
    new Promise<net.Server>((resolve, reject) => {
      const server = net.createServer((client) => {
        const upstream = net.connect(targetPort, '127.0.0.1');
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream);
        upstream.on('data', (chunk: Buffer) => {
          // The request reached the service; its answer is lost on the way back.
          if (cutAnswers) {
            client.resetAndDestroy();
            upstream.destroy();
          } else client.write(chunk);
        });
        upstream.on('end', () => client.end());
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve(server));
    });
  let server: net.Server | undefined = await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    async down() {
      const closing = server;
      server = undefined;
      for (const socket of sockets) socket.resetAndDestroy();
      await new Promise((resolve) => closing?.close(resolve));
    },
    /** While on, every answer is lost: the connection is reset when the service starts answering. */
    cutAnswers(on: boolean) {
      cutAnswers = on;
    },
    async up() {
      server ??= await listen(port);
    },
    close() {
      return this.down();
    },
  };
}
