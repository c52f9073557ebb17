/**
 * A small Prometheus text-format registry (counters and one histogram): enough for /metrics,
 * without a dependency.
 * @module
 */

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

function labelText(labels: Record<string, string>): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

/** Counters and request-duration histograms, rendered in the Prometheus text format 0.0.4. */
export class Metrics {
  private readonly counters = new Map<string, { help: string; values: Map<string, number> }>();
  private readonly hist = new Map<string, { counts: number[]; sum: number; count: number }>();

  /** Adds `by` to counter `name` with `labels`. */
  inc(name: string, help: string, labels: Record<string, string> = {}, by = 1): void {
    let c = this.counters.get(name);
    if (!c) this.counters.set(name, c = { help, values: new Map() });
    const k = labelText(labels);
    c.values.set(k, (c.values.get(k) ?? 0) + by);
  }

  /** Records one request duration (seconds) for `route`. */
  observe(route: string, seconds: number): void {
    const k = labelText({ route });
    let h = this.hist.get(k);
    if (!h) this.hist.set(k, h = { counts: new Array<number>(BUCKETS.length).fill(0), sum: 0, count: 0 });
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]!) h.counts[i]!++;
    h.sum += seconds;
    h.count++;
  }

  /** The exposition text, with `gauges` (name -> [help, value]) appended. */
  render(gauges: Record<string, [string, number]>): string {
    const out: string[] = [];
    for (const [name, c] of this.counters) {
      out.push(`# HELP ${name} ${c.help}`, `# TYPE ${name} counter`);
      for (const [k, v] of c.values) out.push(`${name}${k} ${v}`);
    }
    const hn = 'neardup_http_request_duration_seconds';
    out.push(`# HELP ${hn} HTTP request duration by route.`, `# TYPE ${hn} histogram`);
    for (const [k, h] of this.hist) {
      const inner = k.slice(1, -1);
      for (let i = 0; i < BUCKETS.length; i++) out.push(`${hn}_bucket{${inner},le="${BUCKETS[i]}"} ${h.counts[i]}`);
      out.push(`${hn}_bucket{${inner},le="+Inf"} ${h.count}`, `${hn}_sum${k} ${h.sum}`, `${hn}_count${k} ${h.count}`);
    }
    for (const [name, [help, v]] of Object.entries(gauges)) out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${v}`);
    return out.join('\n') + '\n';
  }
}
