import { useRef, useState } from 'preact/hooks';
import { Notice } from './ui';

/**
 * A secret or a command to copy: the text in a selectable block with a Copy button beside it.
 * Browsers allow the clipboard only over HTTPS or on localhost; elsewhere the button selects the
 * text for a manual copy and says so.
 */
export function CopyText({ label, text, testId }: { label: string; text: string; testId?: string }) {
  const textRef = useRef<HTMLElement>(null);
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);

  const copy = async () => {
    try {
      if (!navigator.clipboard) throw new Error('No clipboard access');
      await navigator.clipboard.writeText(text);
      setCopied('yes');
    } catch {
      const block = textRef.current;
      const selection = window.getSelection();
      if (block && selection) {
        selection.removeAllRanges();
        const range = document.createRange();
        range.selectNodeContents(block);
        selection.addRange(range);
      }
      setCopied('no');
    }
  };

  return (
    <div class="copy-text">
      <div class="copy-text-label">{label}</div>
      <div class="copy-text-row">
        <code class="secret" data-testid={testId} ref={textRef}>
          {text}
        </code>
        {/* copy() catches its own failure and falls back to selecting the text. */}
        <button type="button" class="small-button" aria-label={`Copy ${label.toLowerCase()}`} onClick={() => void copy()}>
          Copy
        </button>
      </div>
      {copied === 'yes' && <Notice kind="success">Copied to the clipboard.</Notice>}
      {copied === 'no' && (
        <Notice kind="warning">
          This browser did not allow copying (it needs HTTPS or localhost). The text is selected: press Ctrl+C (⌘C on a Mac).
        </Notice>
      )}
    </div>
  );
}
