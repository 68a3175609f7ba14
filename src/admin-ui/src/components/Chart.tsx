import { useEffect, useId, useRef, useState } from 'react';
import { formatDate, formatNumber } from '../format';

export interface Series {
  key: string;
  label: string;
  color: string;
}

/**
 * Each series has its own dash pattern and point shape besides its colour, so lines with equal
 * values stay distinguishable where they overlap (the dashes interleave, the shapes differ) and
 * the chart does not rely on colour alone.
 */
const DASHES = ['', '10 5', '3 4', '12 4 3 4', '6 6'];
const MARKERS = ['circle', 'square', 'triangle', 'diamond', 'cross'] as const;
type Marker = (typeof MARKERS)[number];

function Point({ shape, cx, cy, color, children }: { shape: Marker; cx: number; cy: number; color: string; children: React.ReactNode }) {
  const r = 4;
  switch (shape) {
    case 'circle':
      return (
        <circle cx={cx} cy={cy} r={r} fill={color}>
          {children}
        </circle>
      );
    case 'square':
      return (
        <rect x={cx - r + 0.5} y={cy - r + 0.5} width={2 * r - 1} height={2 * r - 1} fill="#ffffff" stroke={color} strokeWidth={2}>
          {children}
        </rect>
      );
    case 'triangle':
      return (
        <polygon points={`${cx},${cy - r - 1} ${cx + r + 1},${cy + r} ${cx - r - 1},${cy + r}`} fill={color}>
          {children}
        </polygon>
      );
    case 'diamond':
      return (
        <polygon
          points={`${cx},${cy - r - 1} ${cx + r + 1},${cy} ${cx},${cy + r + 1} ${cx - r - 1},${cy}`}
          fill="#ffffff"
          stroke={color}
          strokeWidth={2}
        >
          {children}
        </polygon>
      );
    default:
      return (
        <path d={`M${cx - r},${cy - r}L${cx + r},${cy + r}M${cx + r},${cy - r}L${cx - r},${cy + r}`} stroke={color} strokeWidth={2.5}>
          {children}
        </path>
      );
  }
}

function LegendSample({ index, color }: { index: number; color: string }) {
  return (
    <svg width="34" height="12" viewBox="0 0 34 12" aria-hidden="true" className="chart__sample">
      <line x1="1" x2="33" y1="6" y2="6" stroke={color} strokeWidth={2.5} strokeDasharray={DASHES[index % DASHES.length]} />
      <Point shape={MARKERS[index % MARKERS.length]!} cx={17} cy={6} color={color}>
        {null}
      </Point>
    </svg>
  );
}

interface ChartProps<T extends { date: string }> {
  title: string;
  rows: T[];
  series: Series[];
  value: (row: T, key: string) => number;
}

const H = 240;
const PAD = { top: 16, right: 16, bottom: 28, left: 44 };

/** Rounds the top of the axis up to a readable number (1, 2, 5 × 10^n). */
function niceMax(max: number): number {
  if (max <= 4) return 4;
  const exp = 10 ** Math.floor(Math.log10(max));
  const step = [1, 2, 2.5, 5, 10].find((f) => f * exp >= (max / 4) * 1.0001)! * exp;
  return Math.ceil(max / step) * step;
}

/**
 * A small line chart in inline SVG: one line per series over the days, with a legend and the
 * same numbers as a table for screen readers and for anyone who wants the exact values.
 */
export function LineChart<T extends { date: string }>({ title, rows, series, value }: ChartProps<T>) {
  const id = useId();
  // Drawn at the width it is shown at, so the axis text keeps its size on any screen.
  const frame = useRef<HTMLDivElement>(null);
  const [W, setW] = useState(720);
  useEffect(() => {
    const element = frame.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => entry && setW(Math.max(280, Math.round(entry.contentRect.width))));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  const max = niceMax(Math.max(0, ...rows.flatMap((r) => series.map((s) => value(r, s.key)))));
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  const x = (i: number) => PAD.left + (rows.length <= 1 ? innerW / 2 : (i / (rows.length - 1)) * innerW);
  const y = (v: number) => PAD.top + innerH - (v / max) * innerH;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => Math.round(max * f * 100) / 100);
  const labelEvery = Math.max(1, Math.ceil(rows.length / Math.max(2, Math.floor(innerW / 80))));
  const dayLabel = (date: string) => {
    const d = new Date(`${date}T00:00:00Z`);
    return Number.isNaN(d.getTime()) ? date : d.toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
  };

  return (
    <figure className="chart" aria-labelledby={`${id}-title`}>
      <figcaption id={`${id}-title`} className="chart__title">
        {title}
      </figcaption>
      <ul className="chart__legend">
        {series.map((s, index) => (
          <li key={s.key} data-series={s.key}>
            <LegendSample index={index} color={s.color} />
            {s.label}
          </li>
        ))}
      </ul>
      <div ref={frame}>
        <svg
          viewBox={`0 0 ${W} ${H}`}
          width={W}
          height={H}
          className="chart__svg"
          role="img"
          aria-label={`${title}: line chart over ${rows.length} days; the data table below has the values`}
        >
          {ticks.map((t) => (
            <g key={t}>
              <line x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} className="chart__grid" />
              <text x={PAD.left - 8} y={y(t)} className="chart__axis" textAnchor="end" dominantBaseline="middle">
                {formatNumber(t)}
              </text>
            </g>
          ))}
          {rows.map((r, i) =>
            (i % labelEvery === 0 && rows.length - 1 - i >= labelEvery) || i === rows.length - 1 ? (
              <text
                key={r.date}
                x={x(i)}
                y={H - 8}
                className="chart__axis"
                textAnchor={i === 0 ? 'start' : i === rows.length - 1 ? 'end' : 'middle'}
              >
                {dayLabel(r.date)}
              </text>
            ) : null,
          )}
          {/* The first series are drawn wider and underneath, and each has its own dashes and point
              shape, so equal lines still show every series. */}
          {series.map((s, index) => (
            <g key={s.key} data-series={s.key}>
              <polyline
                fill="none"
                stroke={s.color}
                strokeWidth={index === 0 ? 4 : index === 1 ? 2.75 : 2}
                strokeDasharray={DASHES[index % DASHES.length]}
                strokeLinejoin="round"
                points={rows.map((r, i) => `${x(i)},${y(value(r, s.key))}`).join(' ')}
              />
              {rows.map((r, i) =>
                value(r, s.key) > 0 ? (
                  <Point key={r.date} shape={MARKERS[index % MARKERS.length]!} cx={x(i)} cy={y(value(r, s.key))} color={s.color}>
                    <title>{`${s.label}, ${dayLabel(r.date)}: ${formatNumber(value(r, s.key))}`}</title>
                  </Point>
                ) : null,
              )}
            </g>
          ))}
        </svg>
      </div>
      <details className="chart__data">
        <summary>Show the numbers</summary>
        <div className="table-wrap">
          <table className="table table--compact">
            <thead>
              <tr>
                <th scope="col">Day</th>
                {series.map((s) => (
                  <th key={s.key} scope="col" className="num">
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {[...rows].reverse().map((r) => (
                <tr key={r.date}>
                  <th scope="row">{formatDate(`${r.date}T12:00:00Z`)}</th>
                  {series.map((s) => (
                    <td key={s.key} className="num">
                      {formatNumber(value(r, s.key))}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
