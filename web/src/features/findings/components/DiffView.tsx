import { Box } from '@mantine/core';

/** The kind of a unified-diff line, by its first characters. */
function kindOf(line: string): 'add' | 'remove' | 'hunk' | 'file' | 'context' {
  if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff ') || line.startsWith('index ')) return 'file';
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'remove';
  return 'context';
}

// Dark text on pale tints: readable (well above 4.5:1) and the +/- sign says it without colour too.
const STYLES: Record<ReturnType<typeof kindOf>, { background?: string; color: string; fontWeight?: number }> = {
  add: { background: '#dafbe1', color: '#0f3d1c' },
  remove: { background: '#ffebe9', color: '#6e0a0a' },
  hunk: { background: '#ddf4ff', color: '#0a3069' },
  file: { color: '#1f2328', fontWeight: 700 },
  context: { color: '#1f2328' },
};

/** A unified diff in a <pre>, added and removed lines coloured. */
export function DiffView({ diff, label }: { diff: string; label: string }) {
  const lines = diff.replace(/\n$/, '').split('\n');
  return (
    <Box
      component="pre"
      role="region"
      aria-label={label}
      tabIndex={0}
      style={{ background: '#f6f8fa', border: '1px solid #d0d7de', borderRadius: 6, padding: 0, overflowX: 'auto', fontSize: 13, margin: 0 }}
    >
      <code>
        {lines.map((line, index) => (
          <span key={index} data-diff={kindOf(line)} style={{ display: 'block', padding: '0 12px', ...STYLES[kindOf(line)] }}>
            {line || ' '}
          </span>
        ))}
      </code>
    </Box>
  );
}
