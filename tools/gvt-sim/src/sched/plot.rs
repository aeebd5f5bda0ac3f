// SPDX-License-Identifier: GPL-2.0

//! Share-over-time output: CSV and a dependency-free SVG line plot.

use super::engine::RunResult;
use std::fmt::Write;

const COLORS: &[&str] = &[
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// CSV: `time_ms,<vm>...` with each VM's GPU share of every sample interval.
pub fn csv(r: &RunResult) -> String {
    let mut out = String::from("time_ms");
    for v in &r.vms {
        let _ = write!(out, ",{}", v.name);
    }
    out.push('\n');
    let n = r.vms.first().map_or(0, |v| v.series.len());
    for k in 0..n {
        let t = (r.samples_from_ns + (k as u64 + 1) * r.sample_ns) / 1_000_000;
        let _ = write!(out, "{t}");
        for v in &r.vms {
            let _ = write!(out, ",{:.4}", v.series[k]);
        }
        out.push('\n');
    }
    out
}

/// SVG line plot of per-VM share over time.
pub fn svg(r: &RunResult, title: &str) -> String {
    let (w, h, l, rm, t, b) = (860.0, 420.0, 60.0, 170.0, 40.0, 50.0);
    let pw = w - l - rm;
    let ph = h - t - b;
    let n = r.vms.first().map_or(0, |v| v.series.len()).max(1);
    let t0 = r.samples_from_ns as f64 / 1e9;
    let t1 = (r.samples_from_ns + n as u64 * r.sample_ns) as f64 / 1e9;
    let x = |s: f64| l + (s - t0) / (t1 - t0).max(1e-9) * pw;
    let y = |v: f64| t + ph - v.clamp(0.0, 1.0) * ph;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(o, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        o,
        r#"<text x="{}" y="22" font-size="14">{}</text>"#,
        l,
        escape(title)
    );
    for i in 0..=5 {
        let v = i as f64 / 5.0;
        let _ = writeln!(
            o,
            r##"<line x1="{l}" y1="{yy}" x2="{x2}" y2="{yy}" stroke="#ddd"/><text x="{tx}" y="{ty}" text-anchor="end">{v:.1}</text>"##,
            yy = y(v),
            x2 = l + pw,
            tx = l - 6.0,
            ty = y(v) + 4.0
        );
    }
    let ticks = 10;
    for i in 0..=ticks {
        let s = t0 + (t1 - t0) * i as f64 / ticks as f64;
        let _ = writeln!(
            o,
            r#"<text x="{}" y="{}" text-anchor="middle">{s:.1}</text>"#,
            x(s),
            t + ph + 18.0
        );
    }
    let _ = writeln!(
        o,
        r#"<text x="{}" y="{}" text-anchor="middle">time (s)</text><text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">GPU share per {} ms</text>"#,
        l + pw / 2.0,
        h - 10.0,
        t + ph / 2.0,
        t + ph / 2.0,
        r.sample_ns / 1_000_000
    );
    let _ = writeln!(
        o,
        r#"<rect x="{l}" y="{t}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
    );
    for (i, v) in r.vms.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let mut pts = String::new();
        for (k, &s) in v.series.iter().enumerate() {
            let ts = (r.samples_from_ns + (k as u64 + 1) * r.sample_ns) as f64 / 1e9;
            let _ = write!(pts, "{:.1},{:.1} ", x(ts), y(s));
        }
        let _ = writeln!(
            o,
            r#"<polyline fill="none" stroke="{c}" stroke-width="1.6" points="{pts}"/>"#
        );
        let ly = t + 14.0 + i as f64 * 18.0;
        let _ = writeln!(
            o,
            r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{c}" stroke-width="3"/><text x="{}" y="{}">{} (w={})</text>"#,
            l + pw + 10.0,
            l + pw + 30.0,
            l + pw + 36.0,
            ly + 4.0,
            escape(&v.name),
            v.weight
        );
    }
    o.push_str("</svg>\n");
    o
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::engine::VmResult;

    fn result() -> RunResult {
        let vm = |name: &str, series: Vec<f64>| VmResult {
            name: name.into(),
            weight: 2,
            series,
            ..Default::default()
        };
        RunResult {
            vms: vec![vm("a<b>&c", vec![0.25, 1.0]), vm("d", vec![0.75, 0.0])],
            window_ns: 200_000_000,
            switches: 3,
            busy_total_ns: 200_000_000,
            sample_ns: 100_000_000,
            samples_from_ns: 1_000_000_000,
            withheld_ns: 0,
        }
    }

    #[test]
    fn csv_has_one_row_per_sample_at_its_end_time() {
        assert_eq!(
            csv(&result()),
            "time_ms,a<b>&c,d\n1100,0.2500,0.7500\n1200,1.0000,0.0000\n"
        );
    }

    #[test]
    fn svg_escapes_names_and_draws_one_line_per_vm() {
        let s = svg(&result(), "t & <x>");
        assert!(s.starts_with("<svg ") && s.ends_with("</svg>\n"));
        assert!(s.contains("t &amp; &lt;x&gt;"));
        assert!(s.contains("a&lt;b&gt;&amp;c (w=2)"));
        assert!(!s.contains("a<b>"));
        assert_eq!(s.matches("<polyline").count(), 2);
        assert!(s.contains("GPU share per 100 ms"));
    }
}
