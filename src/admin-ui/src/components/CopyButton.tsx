import { useEffect, useState } from 'react';

/** Copies text to the clipboard (the Clipboard API, or a selected textarea where it is missing). */
export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  document.execCommand('copy');
  area.remove();
}

/**
 * A button that copies `text` (or what `load` fetches, for secrets fetched on demand) and says
 * so in a live region.
 */
export function CopyButton({
  text,
  load,
  label = 'Copy',
  className = 'button button--small',
  onCopied,
}: {
  text?: string;
  load?: () => Promise<string>;
  label?: string;
  className?: string;
  onCopied?: (value: string) => void;
}) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  const copy = async () => {
    try {
      const value = text ?? (await load!());
      await copyText(value);
      onCopied?.(value);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <>
      <button type="button" className={className} onClick={copy}>
        {state === 'copied' ? 'Copied' : label}
      </button>
      <span className="visually-hidden" role="status">
        {state === 'copied' ? 'Copied to the clipboard' : state === 'failed' ? 'Copying failed' : ''}
      </span>
    </>
  );
}
