import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * An answer sent before the request body has all arrived (413 past the body limit, a key
 * refused before the body is read) would otherwise close the connection while the client is
 * still writing: its next writes meet a reset, which also throws away the answer it has not
 * read yet (`EPIPE`/`ECONNRESET` instead of the 413). So the rest of the body is read and
 * dropped, and the connection is only cut when that goes past DRAIN_MAX_BYTES or
 * DRAIN_MAX_MS (decisions.md, Hardening): a client cannot make the server read forever.
 */
export const DRAIN_MAX_BYTES = 32 * 1024 * 1024;
export const DRAIN_MAX_MS = 10_000;

export function drainUnreadBodies(app: FastifyInstance, bounds = { maxBytes: DRAIN_MAX_BYTES, maxMs: DRAIN_MAX_MS }): void {
  // A callback hook: a request whose body was read (nearly all) passes without a promise.
  app.addHook('onSend', (request, reply, payload, done) => {
    const raw = request.raw;
    // Only real connections (app.inject() has a stand-in socket, with nothing to drain).
    if (raw.complete || raw.destroyed || !(raw.socket instanceof Socket)) {
      done(null, payload);
      return;
    }
    // `Connection: close` (Fastify's on 413) makes Node close right after the answer: the
    // drained connection may stay open instead, ready for the client's next request.
    reply.removeHeader('connection');
    drain(raw, bounds);
    done(null, payload);
  });
}

function drain(request: IncomingMessage, bounds: { maxBytes: number; maxMs: number }): void {
  const socket = request.socket;
  // When the connection is to close after the answer (the client asked, or the server is
  // stopping), Node ends it with destroySoon() once the answer is written. Until the body
  // has been read, only the sending half is closed: the answer and the FIN reach the client,
  // and what it still sends is read instead of meeting a reset.
  const destroySoon = socket.destroySoon;
  let closeWanted = false;
  socket.destroySoon = () => {
    closeWanted = true;
    socket.end();
  };
  let read = 0;
  let settled = false;
  const done = () => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    request.off('data', count);
    request.off('end', done);
    socket.off('close', done);
    socket.destroySoon = destroySoon;
    if (closeWanted) socket.destroySoon();
  };
  const cut = () => {
    done();
    socket.destroy();
  };
  const count = (chunk: Buffer) => {
    read += chunk.length;
    if (read > bounds.maxBytes) cut();
  };
  const timer = setTimeout(cut, bounds.maxMs);
  timer.unref();
  request.on('data', count);
  request.on('end', done);
  socket.on('close', done);
  request.resume();
}
