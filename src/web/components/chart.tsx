// A small SVG line chart for the dashboard trends: no library, no canvas, styled by CSS.

export interface Series {
  name: string;
  values: number[];
  /** A CSS class giving the line its colour (see .series-* in styles.css). */
  className: string;
}

const WIDTH = 600;
const HEIGHT = 180;
const PAD = { top: 10, right: 10, bottom: 24, left: 36 };

function niceMax(value: number): number {
  if (value <= 5) return 5;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) {
    if (step * magnitude >= value) return step * magnitude;
  }
  return 10 * magnitude;
}

export function LineChart({ title, labels, series }: { title: string; labels: string[]; series: Series[] }) {
  const count = labels.length;
  const max = niceMax(Math.max(0, ...series.flatMap((s) => s.values)));
  const x = (i: number) => PAD.left + (count <= 1 ? (WIDTH - PAD.left - PAD.right) / 2 : (i * (WIDTH - PAD.left - PAD.right)) / (count - 1));
  const y = (v: number) => PAD.top + (HEIGHT - PAD.top - PAD.bottom) * (1 - v / max);
  const ticks = [0, max / 2, max];
  const labelEvery = Math.max(1, Math.ceil(count / 6));
  return (
    <figure class="chart">
      <figcaption>
        {title}
        <span class="legend">
          {series.map((s) => (
            <span key={s.name} class={`legend-item ${s.className}`}>
              {s.name}
            </span>
          ))}
        </span>
      </figcaption>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={`${title}: ${series.map((s) => `${s.name} ${s.values.at(-1) ?? 0}`).join(', ')}`}
      >
        {ticks.map((t) => (
          <g key={t} class="grid">
            <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(t)} y2={y(t)} />
            <text x={PAD.left - 6} y={y(t) + 4} text-anchor="end">
              {Number.isInteger(t) ? t : t.toFixed(1)}
            </text>
          </g>
        ))}
        {labels.map((label, i) =>
          i % labelEvery === 0 || i === count - 1 ? (
            <text
              key={i}
              class="axis"
              x={x(i)}
              y={HEIGHT - 6}
              text-anchor={count > 1 && i === 0 ? 'start' : count > 1 && i === count - 1 ? 'end' : 'middle'}
            >
              {label}
            </text>
          ) : null,
        )}
        {series.map((s) => (
          <g key={s.name} class={`series ${s.className}`}>
            <polyline points={s.values.map((v, i) => `${x(i)},${y(v)}`).join(' ')} fill="none" />
            {s.values.map((v, i) => (
              <circle key={i} cx={x(i)} cy={y(v)} r={count > 40 ? 0 : 3}>
                <title>{`${labels[i]}: ${s.name} ${v}`}</title>
              </circle>
            ))}
          </g>
        ))}
      </svg>
    </figure>
  );
}
