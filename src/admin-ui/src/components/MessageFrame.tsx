import { useEffect, useRef, useState } from 'react';

/**
 * Email HTML (a kept message or a campaign preview) in a frame with a policy of its own: the
 * frame loads an empty document served with the message frame's CSP (inline styles and remote
 * images allowed, no script at all), then the panel writes the HTML into it. A srcdoc frame
 * would inherit the panel's strict policy and show the email without its styles.
 * The sandbox keeps the origin (so the panel can write into it) and allows nothing else: no
 * scripts, forms, popups or navigation of the panel.
 */
export function MessageFrame({ title, className, html }: { title: string; className: string; html: string }) {
  const frame = useRef<HTMLIFrameElement>(null);
  const [ready, setReady] = useState(false);
  useEffect(() => {
    const doc = ready ? frame.current?.contentDocument : null;
    if (!doc) return;
    doc.open();
    doc.write(html);
    doc.close();
  }, [ready, html]);
  return (
    <iframe
      ref={frame}
      title={title}
      className={className}
      sandbox="allow-same-origin"
      src="/admin/api/message-frame"
      onLoad={() => setReady(true)}
    />
  );
}
