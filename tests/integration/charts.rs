//! Every committed chart read back: no bar drawn without area, no axis
//! with two ticks written alike, no title that names a point as "-".
//!
//! The charts are plotters' SVG, whose shapes are flat elements with
//! their attributes in quotes; a dozen lines of parsing read that, where
//! an XML crate would add a dependency for no more than this.

use super::common::{perf_hash_sweep, run_sweep, Scratch};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// One element of an SVG: its name, its attributes, and for a text its
/// content.
struct Element {
    name: String,
    attributes: BTreeMap<String, String>,
    text: String,
}

impl Element {
    fn get(&self, attribute: &str) -> &str {
        self.attributes.get(attribute).map_or("", String::as_str)
    }

    fn number(&self, attribute: &str) -> f64 {
        self.get(attribute).parse().unwrap_or(f64::NAN)
    }
}

/// The elements of an SVG in document order.
fn elements(svg: &str) -> Vec<Element> {
    let mut found = Vec::new();
    for (at, _) in svg.match_indices('<') {
        let rest = &svg[at + 1..];
        if rest.starts_with('/') || rest.starts_with('?') || rest.starts_with('!') {
            continue;
        }
        let Some(end) = rest.find('>') else { break };
        let tag = &rest[..end];
        let name: String = tag.chars().take_while(|c| c.is_alphanumeric()).collect();
        let mut attributes = BTreeMap::new();
        // key="value" pairs: split on the quotes, keys before each odd one.
        let parts: Vec<&str> = tag[name.len()..].split('"').collect();
        for pair in parts.chunks(2) {
            if let [key, value] = pair {
                let key = key.trim().trim_end_matches('=').trim();
                attributes.insert(key.to_string(), value.to_string());
            }
        }
        let text = if name == "text" {
            let body = &rest[end + 1..];
            body[..body.find("</text>").unwrap_or(0)].trim().to_string()
        } else {
            String::new()
        };
        found.push(Element {
            name,
            attributes,
            text,
        });
    }
    found
}

/// What is wrong with a chart, one line each.
fn faults(svg: &str) -> Vec<String> {
    let elements = elements(svg);
    let mut faults = Vec::new();
    for e in elements.iter().filter(|e| e.name == "rect") {
        let filled = e.get("fill") != "none" && e.get("opacity") != "0";
        if filled && !(e.number("width") > 0.0 && e.number("height") > 0.0) {
            faults.push(format!(
                "a filled rectangle of no area at x={} y={} ({}x{})",
                e.get("x"),
                e.get("y"),
                e.get("width"),
                e.get("height")
            ));
        }
    }
    // plotters writes a y axis's ticks right-aligned and centred on their
    // tick (text-anchor end, dy 0.5ex), one column per axis; an x axis's
    // centred below their tick (middle, 0.76em), one row per axis. Titles
    // and axis descriptions stand alone on their row, and text inside a
    // plot (a heat map's cells, a bar's value) is anchored otherwise.
    let mut axes: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for e in elements.iter().filter(|e| e.name == "text") {
        if e.text.contains(" at -") {
            faults.push(format!("a title naming its point \"-\": {}", e.text));
        }
        if !e.get("transform").is_empty() {
            continue;
        }
        let axis = match (e.get("text-anchor"), e.get("dy")) {
            ("end", "0.5ex") => format!("y axis at x={}", e.get("x")),
            ("middle", "0.76em") => format!("x axis at y={}", e.get("y")),
            _ => continue,
        };
        axes.entry(axis).or_default().push(&e.text);
    }
    for (axis, labels) in axes {
        let mut sorted = labels.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            faults.push(format!("{axis} repeats a label: {labels:?}"));
        }
    }
    faults
}

fn svgs_under(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            svgs_under(&path, found);
        } else if path.extension().is_some_and(|e| e == "svg") {
            found.push(path);
        }
    }
}

#[test]
fn every_committed_chart_has_bars_with_area_and_axes_with_distinct_labels() {
    let mut svgs = Vec::new();
    svgs_under(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("reports"),
        &mut svgs,
    );
    assert!(svgs.len() >= 100, "only {} charts found", svgs.len());
    let mut wrong = Vec::new();
    for path in &svgs {
        let svg = fs::read_to_string(path).unwrap();
        wrong.extend(
            faults(&svg)
                .into_iter()
                .map(|f| format!("{}: {f}", path.display())),
        );
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_chart_check_finds_a_bar_of_no_height_and_a_repeated_tick() {
    let svg = r##"<svg width="960" height="300" xmlns="http://www.w3.org/2000/svg">
<rect x="0" y="0" width="960" height="300" opacity="1" fill="#FFFFFF" stroke="none"/>
<rect x="296" y="100" width="166" height="0" opacity="1" fill="#0072B2" stroke="none"/>
<rect x="296" y="100" width="166" height="0" opacity="1" fill="none" stroke="#FFFFFF"/>
<text x="90" y="50" dy="0.5ex" text-anchor="end" font-family="sans-serif" font-size="12" opacity="1" fill="#000000">
0
</text>
<text x="90" y="90" dy="0.5ex" text-anchor="end" font-family="sans-serif" font-size="12" opacity="1" fill="#000000">
0
</text>
<text x="480" y="5" dy="0.76em" text-anchor="middle" font-family="sans-serif" font-size="17" opacity="1" fill="#000000">
Bucket load, global at - (8 keys in 4 buckets)
</text>
</svg>"##;
    let found = faults(svg);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(found[0].starts_with("a filled rectangle of no area"));
    assert!(found[1].starts_with("a title naming its point"));
    assert!(found[2].starts_with("y axis at x=90 repeats a label"));
}

#[test]
fn a_sweep_of_one_design_at_one_cpu_count_draws_its_one_bar_with_height() {
    let config = perf_hash_sweep(
        "duration_us = 20\nwarmup_us = 5\nrepetitions = 3",
        &["fixed-256"],
        "[4]",
    );
    let (s, path) = Scratch::holding("one-bar", "one.toml", &config);
    let out = s.0.join("out");
    let run = run_sweep(&path, &out, &["--plain"]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for chart in [
        "throughput.svg",
        "thread_ops_per_sec.svg",
        "lock_wait_hold.svg",
    ] {
        let svg = fs::read_to_string(out.join("charts").join(chart)).unwrap();
        assert_eq!(faults(&svg), Vec::<String>::new(), "{chart}");
        let bars: Vec<Element> = elements(&svg)
            .into_iter()
            .filter(|e| e.name == "rect" && !["none", "#FFFFFF"].contains(&e.get("fill")))
            .collect();
        assert!(!bars.is_empty(), "{chart} draws no bar");
        assert!(bars.iter().all(|b| b.number("height") >= 20.0), "{chart}");
        // Three repetitions: the mean carries its interval.
        assert!(svg.contains(" ± "), "{chart} writes no interval");
    }
}
