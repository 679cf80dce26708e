//! `report.html`: one self-contained page (figures inlined as SVG, no external files or scripts).

use super::Section;
use crate::claim::Verdict;
use crate::compare::{columns, varying_params};
use std::fmt::Write;

/// Escape text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1280px;margin:2em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:1em 0;font-size:14px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
td:first-child,th:first-child{text-align:left}th{background:#eee}.ok{color:#06702a;font-weight:bold}\
.miss{color:#b00020;font-weight:bold}figure{display:inline-block;margin:.3em;vertical-align:top}figcaption{font-size:13px;color:#555}\
h2{border-bottom:2px solid #ddd;margin-top:2em}";

/// The verdict cell: value, whether it is within tolerance, and how it spreads over trial seeds.
pub fn verdict_cells(v: &Verdict) -> [String; 4] {
    let rx = v.rxlab.map_or_else(|| "no data".into(), |x| format!("{x:.3}"));
    let (class, word) = match (v.rxlab, v.within) {
        (None, _) => ("miss", "not run"),
        (_, true) => ("ok", "within"),
        (_, false) => ("miss", "miss"),
    };
    [
        esc(&v.what),
        format!("{}{:.3}", esc(crate::claim::bound_sign(v.bound)), v.paper),
        rx,
        format!(
            "<span class=\"{class}\">{word} ({})</span>{}",
            v.tolerance_text(),
            v.seeds.map_or_else(String::new, |s| format!("<br><small>{s}</small>"))
        ),
    ]
}

/// A link to the first figure of section `s` that shows `metric` (empty when none does).
fn figure_link(s: &Section, metric: &str) -> String {
    s.figures
        .iter()
        .position(|f| f.spec.shows(metric))
        .map_or_else(String::new, |i| format!("<a href=\"#{}\">Fig. {}</a>", esc(&s.figures[i].id), i + 1))
}

/// Point tables longer than this fold under a summary line, so a 960-run sweep does not bury the
/// experiments after it.
const FOLD_ROWS: usize = 24;

fn table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    out.push_str("<table><tr>");
    header.iter().for_each(|h| _ = write!(out, "<th>{}</th>", esc(h)));
    out.push_str("</tr>");
    for r in rows {
        out.push_str("<tr>");
        r.iter().for_each(|c| _ = write!(out, "<td>{c}</td>"));
        out.push_str("</tr>");
    }
    out.push_str("</table>\n");
}

/// The page for `sections`.
pub fn page(sections: &[Section]) -> String {
    let mut out = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>rxlab report</title><style>{STYLE}</style></head><body>\n<h1>rxlab report</h1>\n"
    );
    let claims: Vec<Vec<String>> = sections
        .iter()
        .filter_map(|s| s.exp.claim.as_ref().map(|c| (s, c)))
        .flat_map(|(s, c)| {
            s.verdicts.iter().zip(&c.check).map(move |(v, check)| {
                let [what, paper, rx, verdict] = verdict_cells(v);
                vec![
                    format!("<a href=\"#{}\">{}</a>", esc(&s.exp.name), esc(&format!("{} {}", c.paper, c.figure))),
                    what,
                    paper,
                    rx,
                    verdict,
                    figure_link(s, &check.metric),
                ]
            })
        })
        .collect();
    if !claims.is_empty() {
        out.push_str("<h2>Claims: the paper's value next to rxlab's</h2>\n");
        let header = ["claim", "ratio", "paper", "rxlab", "verdict", "figure"].map(String::from);
        table(&mut out, &header, &claims);
    }
    for s in sections {
        let title = if s.exp.meta.title.is_empty() { &s.exp.name } else { &s.exp.meta.title };
        _ = write!(
            out,
            "<h2 id=\"{}\">{}</h2>\n<p>{}</p>\n",
            esc(&s.exp.name),
            esc(title),
            esc(&s.exp.meta.description)
        );
        if let Some(c) = &s.exp.claim {
            _ = writeln!(out, "<p><b>{} {}:</b> {}</p>", esc(&c.paper), esc(&c.figure), esc(&c.text));
            let rows: Vec<Vec<String>> = s
                .verdicts
                .iter()
                .zip(&c.check)
                .map(|(v, check)| verdict_cells(v).into_iter().chain([figure_link(s, &check.metric)]).collect())
                .collect();
            table(&mut out, &["ratio", "paper", "rxlab", "verdict", "figure"].map(String::from), &rows);
        }
        for f in &s.figures {
            let pdf = f.png.strip_suffix(".png").map_or_else(|| f.png.clone(), |s| format!("{s}.pdf"));
            _ = writeln!(
                out,
                "<figure id=\"{}\">{}<figcaption>{} (<a href=\"{}\">PNG</a>, <a href=\"{}\">PDF</a>)</figcaption></figure>",
                esc(&f.id),
                f.svg,
                esc(&f.title),
                esc(&f.png),
                esc(&pdf)
            );
        }
        let params = varying_params(&s.rows);
        let columns = columns(&s.rows);
        let mut header = vec!["point".to_string()];
        header.extend(params.iter().cloned());
        header.extend(columns.iter().map(|c| c.header()));
        let rows: Vec<Vec<String>> = s
            .rows
            .iter()
            .map(|r| {
                let mut line = vec![esc(&r.label())];
                line.extend(params.iter().map(|p| esc(&r.text(p))));
                line.extend(columns.iter().map(|c| c.value(r)));
                line
            })
            .collect();
        if rows.len() > FOLD_ROWS {
            _ = write!(out, "<details><summary>{} points</summary>", rows.len());
            table(&mut out, &header, &rows);
            out.push_str("</details>\n");
        } else {
            table(&mut out, &header, &rows);
        }
    }
    out.push_str("</body></html>\n");
    out
}
