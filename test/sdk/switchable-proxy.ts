import net from 'node:net';

/**
 * A TCP proxy in front of a test server that can be taken down and brought back on the same
 * port: down, connections are refused and open ones reset, exactly what a client sees of a
 * stopped service (or of a lost network), without the seconds a real restart costs. It can also
 * lose the answers: the request reaches the service, the client sees a reset connection.
 */
export async function switchableProxy(targetPort: number) {
  const sockets = new Set<net.Socket>();
  /** Answers with this status line are lost while set (the others pass). */
  let cutStatus: number | undefined;
  let cuts = 0;
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
        let answer: 'pass' | 'cut' = 'pass';
        upstream.on('data', (chunk: Buffer) => {
          // The service answered (so it had read and handled the request); a cut answer is lost
          // on the way back. A chunk that starts with a status line starts an answer (a kept-alive
          // connection carries several; these answers are small enough to start a chunk each).
          const head = chunk.toString('latin1', 0, 16);
          if (head.startsWith('HTTP/1.1 ')) answer = cutStatus !== undefined && head.startsWith(`HTTP/1.1 ${cutStatus} `) ? 'cut' : 'pass';
          if (answer === 'cut') {
            if (!client.destroyed) cuts++;
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
    /**
     * While set, every answer with this status is lost: the connection is reset when the service
     * starts answering. Other answers (a 429, say) pass. `undefined` stops it.
     */
    cutAnswers(status: number | undefined) {
      cutStatus = status;
    },
    /** Answers lost so far. */
    get cuts() {
      return cuts;
    },
    async up() {
      server ??= await listen(port);
    },
    close() {
      return this.down();
    },
  };
}
