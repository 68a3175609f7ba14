import { SmtpSink } from '../test/fakes/smtp-sink.js';

/**
 * The test SMTP sink in a child process: the outside world's mail server should not share
 * Herald's event loop (parsing every message costs CPU the dispatcher would otherwise have).
 * Talks to its parent over IPC: sends {url} once, answers 'count' with {count}.
 */
const sink = await SmtpSink.start();
const send = (message: unknown) => process.send?.(message);
send({ url: sink.url });
process.on('message', (message) => {
  if (message === 'count') send({ count: sink.messages.length });
  if (message === 'stop') void sink.close().then(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
