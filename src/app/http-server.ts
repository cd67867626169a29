import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { Server as NetServer, type AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';

export interface HttpServer {
  readonly server: Server;
  readonly port: number;
  /**
   * Stops accepting connections at once, closes idle keep-alive connections, lets requests in flight
   * finish (their answers close their connections) and, after `graceMs`, cuts what is left.
   */
  stop(graceMs: number): Promise<void>;
}

/**
 * The HTTP server with its limits on slow clients. Node checks the header and request timeouts only
 * every `connectionsCheckingInterval` (30 s by default), so the interval is kept well under them.
 */
export const startHttpServer = async (
  handler: RequestListener,
  config: Pick<Config, 'port' | 'host' | 'http'>,
  logger: Logger,
): Promise<HttpServer> => {
  const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs } = config.http;
  const server = createServer(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, Math.floor(headersTimeoutMs / 4)),
    },
    handler,
  );
  server.keepAliveTimeout = keepAliveTimeoutMs;

  let stopping = false;
  const inFlight = new Set<ServerResponse>();
  const lastOnItsConnection = (res: ServerResponse) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  };
  server.on('request', (_req, res: ServerResponse) => {
    // A request that arrives on a kept-alive connection while stopping is still answered, but its
    // answer tells the client not to send another on that connection.
    if (stopping) lastOnItsConnection(res);
    inFlight.add(res);
    res.once('close', () => {
      inFlight.delete(res);
      // The connection this answer was on may now be idle: close it rather than wait for the client.
      if (stopping) setImmediate(() => server.closeIdleConnections());
    });
  });

  server.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;

  let stopped: Promise<void> | undefined;
  const stop = (graceMs: number) =>
    (stopped ??= (async () => {
      stopping = true;
      const closed = new Promise<void>((resolve) => server.once('close', () => resolve()));
      // The listener first: by the time a client sees its idle connection end, nobody can connect
      // any more. (http's close() ends idle connections before it closes the listener.)
      NetServer.prototype.close.call(server);
      // http's own part of closing: idle connections, and its timeout checks.
      server.close();
      for (const res of inFlight) lastOnItsConnection(res);
      logger.info({ inFlight: inFlight.size, graceMs }, 'stopped accepting connections; finishing requests in flight');
      const force = setTimeout(() => {
        logger.warn({ inFlight: inFlight.size }, 'shutdown grace period over: closing the connections left');
        server.closeAllConnections();
      }, graceMs);
      await closed;
      clearTimeout(force);
    })());
  return { server, port, stop };
};
