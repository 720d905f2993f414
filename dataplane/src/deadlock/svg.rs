//! The picture of a [`PauseGraph`]: the graph (vertices on a circle, a
//! switch's buffers side by side, "waits for" arrows, every cycle ever
//! seen in red) above a timeline of pause states per link (egress paused,
//! ingress XOFF, watchdog storm as bars; cycle lifetimes as red bands;
//! watchdog storms and restores as vertical lines), time in ms.
//!
//! Contract: pure string building, hand-written SVG 1.1 (no fonts beyond
//! `sans-serif`); spans closer than a pixel are merged so a run with
//! thousands of pause transitions stays a small file.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use super::{PauseGraph, Side, StateKind, Vertex};
use crate::time::Instant;

const WIDTH: f64 = 1200.0;
const GRAPH_H: f64 = 460.0;
const ROW_H: f64 = 22.0;
const LABEL_W: f64 = 300.0;
const RIGHT_PAD: f64 = 30.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A tick step (1, 2, 5 × 10^k ms) giving about `target` ticks over `span_ms`.
fn tick_step(span_ms: f64, target: f64) -> f64 {
    let raw = (span_ms / target).max(1e-6);
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

fn fmt_ms(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    format!("{v:.decimals$}")
}

/// The SVG text of `g`: title, graph, timeline. Times are drawn in ms since
/// `origin`; the timeline ends at `end` (or the last input).
pub fn render_svg(g: &PauseGraph, title: &str, origin: Instant, end: Option<Instant>) -> String {
    let (first, last) = g.time_range().unwrap_or((origin, origin));
    let end = end.unwrap_or(last).max(first);
    let ms = |t: Instant| t.saturating_duration_since(origin).as_nanos() as f64 / 1e6;
    let (t0, t1) = (ms(origin.min(first)), ms(end).max(ms(origin) + 1e-3));
    let rows: Vec<&super::Row> = {
        let mut r: Vec<_> = g.timeline().iter().collect();
        r.sort_by(|a, b| (&a.port, a.priority, a.kind).cmp(&(&b.port, b.priority, b.kind)));
        r
    };
    let timeline_top = GRAPH_H + 40.0;
    let height = timeline_top + 40.0 + ROW_H * (rows.len() + 1) as f64 + 60.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif">"#
    );
    s.push_str(
        r##"<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker><marker id="arrowred" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#d62728"/></marker></defs>
<rect width="100%" height="100%" fill="white"/>
"##,
    );
    let _ = writeln!(
        s,
        r#"<text x="20" y="28" font-size="18" font-weight="bold">{}</text>"#,
        esc(title)
    );
    draw_graph(&mut s, g, &ms);
    draw_timeline(&mut s, g, &rows, timeline_top, (t0, t1), &ms);
    s.push_str("</svg>\n");
    s
}

/// Writes [`render_svg`] to `path`.
pub fn write_svg(
    g: &PauseGraph,
    path: &Path,
    title: &str,
    origin: Instant,
    end: Option<Instant>,
) -> std::io::Result<()> {
    std::fs::write(path, render_svg(g, title, origin, end))
}

fn draw_graph(s: &mut String, g: &PauseGraph, ms: &dyn Fn(Instant) -> f64) {
    let current = g.edges();
    let mut red: BTreeSet<(Vertex, Vertex)> = BTreeSet::new();
    for h in g.history() {
        let v = &h.cycle.vertices;
        for i in 0..v.len() {
            red.insert((v[i].clone(), v[(i + 1) % v.len()].clone()));
        }
    }
    // Every vertex that is or was in a cycle, or is on a current edge, and
    // both ends of every link that ever paused.
    let mut verts: BTreeSet<Vertex> = BTreeSet::new();
    for (a, b) in current.iter().chain(red.iter()) {
        verts.insert(a.clone());
        verts.insert(b.clone());
    }
    for r in g.timeline() {
        let side = match r.kind {
            StateKind::IngressXoff => Side::Ingress,
            _ => Side::Egress,
        };
        verts.insert(Vertex {
            port: r.port.clone(),
            priority: r.priority,
            side,
        });
    }
    // Cycle vertices first, in "waits for" order, so a cycle is drawn as
    // a ring; the rest after, sorted.
    let mut order: Vec<Vertex> = Vec::new();
    for h in g.history() {
        for v in &h.cycle.vertices {
            if !order.contains(v) {
                order.push(v.clone());
            }
        }
    }
    for v in verts {
        if !order.contains(&v) {
            order.push(v);
        }
    }
    let verts = order;
    let (cx, cy, rad) = (
        WIDTH / 2.0,
        50.0 + (GRAPH_H - 60.0) / 2.0,
        GRAPH_H / 2.0 - 70.0,
    );
    let n = verts.len().max(1) as f64;
    let pos = |v: &Vertex| -> (f64, f64) {
        let i = verts.iter().position(|x| x == v).unwrap_or(0) as f64;
        let a = -std::f64::consts::FRAC_PI_2 + std::f64::consts::TAU * i / n;
        (cx + rad * 1.6 * a.cos(), cy + rad * a.sin())
    };
    let mut caption = String::from("pause-dependency graph (arrow: waits for)");
    match g.history().first() {
        Some(h) => {
            let _ = write!(
                caption,
                "; cycle {} formed at {:.1} ms",
                h.cycle.describe(),
                ms(h.span.start)
            );
            match h.span.end {
                Some(e) => {
                    let _ = write!(caption, ", broken at {:.1} ms", ms(e));
                }
                None => caption.push_str(", still there at the end"),
            }
        }
        None => caption.push_str("; no cycle"),
    }
    let _ = writeln!(
        s,
        r#"<text x="20" y="52" font-size="13">{}</text>"#,
        esc(&caption)
    );
    let r = 9.0;
    let draw_edge = |s: &mut String, a: &Vertex, b: &Vertex, color: &str, marker: &str, w| {
        let ((x1, y1), (x2, y2)) = (pos(a), pos(b));
        let (dx, dy) = (x2 - x1, y2 - y1);
        let d = (dx * dx + dy * dy).sqrt().max(1e-6);
        let (ux, uy) = (dx / d, dy / d);
        let _ = writeln!(
            s,
            r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="{w}" marker-end="url(#{marker})"/>"#,
            x1 + ux * r,
            y1 + uy * r,
            x2 - ux * (r + 2.0),
            y2 - uy * (r + 2.0)
        );
    };
    for (a, b) in &current {
        if !red.contains(&(a.clone(), b.clone())) {
            draw_edge(s, a, b, "#555", "arrow", 1.5);
        }
    }
    for (a, b) in &red {
        draw_edge(s, a, b, "#d62728", "arrowred", 3.0);
    }
    for v in &verts {
        let (x, y) = pos(v);
        let fill = match v.side {
            Side::Egress => "#ff7f0e",
            Side::Ingress => "#1f77b4",
        };
        let _ = writeln!(
            s,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{fill}" stroke="black"/>"#
        );
        // Labels outside the circle.
        let out = if x >= cx { 14.0 } else { -14.0 };
        let anchor = if x >= cx { "start" } else { "end" };
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" font-size="13" text-anchor="{anchor}">{}</text>"#,
            x + out,
            y + 4.0,
            esc(&v.to_string())
        );
    }
    // Legend.
    let ly = GRAPH_H - 10.0;
    let _ = writeln!(
        s,
        r##"<circle cx="30" cy="{ly}" r="7" fill="#ff7f0e" stroke="black"/><text x="42" y="{}" font-size="12">egress queue (paused by the peer)</text><circle cx="270" cy="{ly}" r="7" fill="#1f77b4" stroke="black"/><text x="282" y="{}" font-size="12">ingress PG (XOFF to the peer)</text><line x1="490" y1="{ly}" x2="530" y2="{ly}" stroke="#d62728" stroke-width="3"/><text x="538" y="{}" font-size="12">cycle (at any time in the run)</text>"##,
        ly + 4.0,
        ly + 4.0,
        ly + 4.0
    );
}

fn draw_timeline(
    s: &mut String,
    g: &PauseGraph,
    rows: &[&super::Row],
    top: f64,
    (t0, t1): (f64, f64),
    ms: &dyn Fn(Instant) -> f64,
) {
    let x0 = LABEL_W;
    let x1 = WIDTH - RIGHT_PAD;
    let x = |t: f64| x0 + (t - t0) / (t1 - t0).max(1e-9) * (x1 - x0);
    let body_top = top + 30.0;
    let body_h = ROW_H * (rows.len() + 1) as f64;
    let _ = writeln!(
        s,
        r#"<text x="20" y="{}" font-size="15" font-weight="bold">pause states per link</text>"#,
        top + 14.0
    );
    // Row 0: when the graph had a cycle.
    let _ = writeln!(
        s,
        r##"<text x="{:.1}" y="{:.1}" font-size="12" font-weight="bold" text-anchor="end" fill="#d62728">cycle in the graph</text>"##,
        x0 - 8.0,
        body_top + ROW_H * 0.7
    );
    for (i, r) in rows.iter().enumerate() {
        let y = body_top + ROW_H * (i + 1) as f64;
        let peer = g
            .peer(&r.port)
            .map_or_else(|| "its peer".to_string(), |p| p.to_string());
        let (label, color) = match r.kind {
            StateKind::EgressPaused => (
                format!("{} prio {} paused by {peer}", r.port, r.priority),
                "#ff7f0e",
            ),
            StateKind::IngressXoff => (
                format!("{} prio {} XOFF to {peer}", r.port, r.priority),
                "#1f77b4",
            ),
            StateKind::Storm => (
                format!("{} prio {} watchdog storm", r.port, r.priority),
                "#9467bd",
            ),
        };
        if i % 2 == 0 {
            let _ = writeln!(
                s,
                r##"<rect x="{x0}" y="{y:.1}" width="{:.1}" height="{ROW_H}" fill="#f4f4f4"/>"##,
                x1 - x0
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="end">{}</text>"#,
            x0 - 8.0,
            y + ROW_H * 0.7,
            esc(&label)
        );
        // Merge spans closer than a pixel.
        let mut merged: Vec<(f64, f64)> = Vec::new();
        for sp in &r.spans {
            let (a, b) = (x(ms(sp.start)), x(sp.end.map_or(t1, ms)));
            match merged.last_mut() {
                Some(last) if a - last.1 < 1.0 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        for (a, b) in merged {
            let _ = writeln!(
                s,
                r#"<rect x="{a:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{color}"/>"#,
                y + 4.0,
                (b - a).max(1.0),
                ROW_H - 8.0
            );
        }
    }
    // Cycle lifetimes: a bar in row 0 and a light band over every row.
    for h in g.history() {
        let (a, b) = (x(ms(h.span.start)), x(h.span.end.map_or(t1, ms)));
        let _ = writeln!(
            s,
            r##"<rect x="{a:.1}" y="{body_top:.1}" width="{:.1}" height="{body_h:.1}" fill="#d62728" fill-opacity="0.10"/><rect x="{a:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#d62728"/>"##,
            (b - a).max(1.0),
            body_top + 4.0,
            (b - a).max(1.0),
            ROW_H - 8.0
        );
    }
    // Watchdog storms and restores: one line per instant and kind, the
    // ports that fired then in one label.
    let mut groups: Vec<(Instant, bool, Vec<String>)> = Vec::new();
    for m in g.markers() {
        match groups
            .iter_mut()
            .find(|(at, storm, _)| *at == m.at && *storm == m.storm)
        {
            Some(gr) => gr.2.push(m.port.to_string()),
            None => groups.push((m.at, m.storm, vec![m.port.to_string()])),
        }
    }
    // Labels go on the first of two lines above the rows where they do not
    // run into the previous label; one that fits on neither is left out
    // (its dashed line stays, and the storm rows say which port).
    let mut label_end = [f64::NEG_INFINITY; 2];
    groups.sort_by_key(|g| g.0);
    for (at, storm, ports) in &groups {
        let xm = x(ms(*at));
        let (color, what) = if *storm {
            ("#9467bd", "storm")
        } else {
            ("#2ca02c", "restore")
        };
        let _ = writeln!(
            s,
            r#"<line x1="{xm:.1}" y1="{:.1}" x2="{xm:.1}" y2="{:.1}" stroke="{color}" stroke-width="1.5" stroke-dasharray="5,3"/>"#,
            body_top - 2.0,
            body_top + body_h,
        );
        let label = format!("watchdog {what} {}", ports.join(", "));
        // ~6 px a character at 11 px.
        let width = 6.0 * label.chars().count() as f64;
        if let Some(line) = (0..2).find(|&l| xm + 3.0 > label_end[l] + 4.0) {
            label_end[line] = xm + 3.0 + width;
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" font-size="11" fill="{color}">{}</text>"#,
                xm + 3.0,
                top + 14.0 + 12.0 * line as f64,
                esc(&label)
            );
        }
    }
    // Time axis.
    let ay = body_top + body_h;
    let _ = writeln!(
        s,
        r#"<line x1="{x0}" y1="{ay:.1}" x2="{x1}" y2="{ay:.1}" stroke="black"/>"#
    );
    let step = tick_step(t1 - t0, 10.0);
    let mut t = (t0 / step).ceil() * step;
    while t <= t1 + 1e-9 {
        let xt = x(t);
        let _ = writeln!(
            s,
            r#"<line x1="{xt:.1}" y1="{ay:.1}" x2="{xt:.1}" y2="{:.1}" stroke="black"/><text x="{xt:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text>"#,
            ay + 5.0,
            ay + 19.0,
            fmt_ms(t, step)
        );
        t += step;
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" font-size="13" text-anchor="middle">time [ms]</text>"#,
        (x0 + x1) / 2.0,
        ay + 38.0
    );
}
