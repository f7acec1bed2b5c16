import type { ComponentChildren } from 'preact';

/**
 * A named region that scrolls sideways on a narrow screen (wide tables). It takes the keyboard
 * focus so a keyboard user can scroll it too: axe's scrollable-region-focusable (WCAG 2.1.1).
 */
export function ScrollRegion({ label, children, className }: { label: string; children: ComponentChildren; className?: string }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard to be scrolled without a mouse (WCAG 2.1.1; axe scrollable-region-focusable).
    <section class={className ? `table-scroll ${className}` : 'table-scroll'} aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}
