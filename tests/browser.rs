//! The HTML pages as a browser draws them: Debian's chromium, headless, renders the node
//! report, a run's page and the fleet page; each is screenshotted as it ships, and a copy with
//! a measuring script added (the page's own Content-Security-Policy forbids scripts) reports
//! the drawn geometry: the charts are there with their points and labels, no two labels
//! overlap, no line label sits on a point, the axis reads "0" and not "0.000", no x label
//! repeats, and the fleet's chart puts failures first; the fleet's table of nodes stays
//! within the page however long their directories.

mod common;

use std::path::{Path, PathBuf};

use common::Env;

/// Measures the page after layout and writes `key=value` lines into `<pre id="measured">`.
const MEASURE: &str = r#"
<script>
(function () {
  var out = [];
  function put(k, v) { out.push(k + '=' + v); }
  function box(e) { return e.getBoundingClientRect(); }
  function meets(a, b, slack) {
    return a.left < b.right - slack && b.left < a.right - slack &&
           a.top < b.bottom - slack && b.top < a.bottom - slack;
  }
  function words(e) { return (e.textContent || '').replace(/\s+/g, ' ').trim(); }
  var svgs = document.querySelectorAll('svg.chart');
  put('charts', svgs.length);
  svgs.forEach(function (svg, i) {
    var name = 'chart' + i;
    var sb = box(svg);
    put(name + '.class', svg.getAttribute('class').replace(/\s+/g, '.'));
    put(name + '.size', Math.round(sb.width) + 'x' + Math.round(sb.height));
    var texts = Array.prototype.filter.call(svg.querySelectorAll('text'), function (t) {
      return words(t) !== '';
    });
    put(name + '.texts', texts.length);
    var overlaps = [];
    for (var a = 0; a < texts.length; a++) {
      for (var b = a + 1; b < texts.length; b++) {
        if (meets(box(texts[a]), box(texts[b]), 0.5)) {
          overlaps.push(words(texts[a]) + ' / ' + words(texts[b]));
        }
      }
    }
    put(name + '.overlapping', overlaps.join(' | '));
    var outside = texts.filter(function (t) {
      var b = box(t);
      return b.left < sb.left - 1 || b.right > sb.right + 1 || b.top < sb.top - 1 || b.bottom > sb.bottom + 1;
    }).map(words);
    put(name + '.clipped', outside.join(' | '));
    var marks = svg.querySelectorAll('circle, polyline, rect.bar');
    var onPoint = [];
    svg.querySelectorAll('.threshold-label, .aggregate-label').forEach(function (l) {
      svg.querySelectorAll('circle').forEach(function (c) {
        if (meets(box(l), box(c), 0)) { onPoint.push(words(l)); }
      });
    });
    put(name + '.label-on-point', onPoint.join(' | '));
    put(name + '.marks', marks.length);
    put(name + '.circles', svg.querySelectorAll('circle').length);
    var pl = svg.querySelector('polyline');
    put(name + '.polyline-points', pl ? pl.getAttribute('points').trim().split(/\s+/).length : 0);
    var y = Array.prototype.map.call(svg.querySelectorAll('text.tick-label.y'), words);
    put(name + '.y-labels', y.join(','));
    var x = Array.prototype.map.call(svg.querySelectorAll('text.tick-label.x'), words);
    put(name + '.x-labels', x.join(','));
    var nodes = Array.prototype.map.call(svg.querySelectorAll('g.node'), function (g) {
      return g.getAttribute('class').split(' ')[1];
    });
    put(name + '.nodes', nodes.join(','));
    put(name + '.days', svg.querySelectorAll('g.day').length);
    put(name + '.threshold-lines', svg.querySelectorAll('line.threshold').length);
  });
  put('verdict', words(document.querySelector('.banner .word')));
  // What is drawn in the pass colour or the pass side's tint, outside the verdict's banner
  // (by tag and class), and the check marks in the page's text.
  var probe = document.createElement('span');
  document.body.appendChild(probe);
  probe.style.color = 'var(--pass)';
  var pass = getComputedStyle(probe).color;
  probe.style.color = 'var(--zone)';
  var tint = getComputedStyle(probe).color;
  probe.remove();
  var green = [];
  document.querySelectorAll('body *').forEach(function (e) {
    if (e.closest('.banner')) { return; }
    var cs = getComputedStyle(e);
    if (cs.color === pass || cs.fill === pass || cs.fill === tint) {
      green.push(e.tagName.toLowerCase() + '.' + (e.getAttribute('class') || '').replace(/\s+/g, '.'));
    }
  });
  put('pass-coloured', green.join(','));
  put('check-marks', (document.body.innerText.match(/\u2713/g) || []).length);
  put('unjudged-points', document.querySelectorAll('circle.unjudged').length);
  put('page-width', document.documentElement.scrollWidth + '/' + window.innerWidth);
  // Boxes that scroll sideways because their table is wider than the page: by their table's class.
  var wide = Array.prototype.filter.call(document.querySelectorAll('.scroll'), function (d) {
    return d.scrollWidth > d.clientWidth + 1;
  }).map(function (d) {
    var t = d.querySelector('table');
    return (t && t.getAttribute('class')) || 'table';
  });
  put('scrolling', wide.join(','));
  var main = document.querySelector('main');
  put('main-width', main ? Math.round(box(main).width) : 0);
  var nodes = document.querySelector('#nodes table');
  put('nodes-table-width', nodes ? Math.round(box(nodes).width) : 0);
  var pre = document.createElement('pre');
  pre.id = 'measured';
  pre.textContent = out.join('\n');
  document.body.appendChild(pre);
})();
</script>
"#;

/// chromium, headless, without a sandbox (CI runs as root) and with a profile of its own.
fn chromium(profile: &Path) -> std::process::Command {
    let mut c = std::process::Command::new("chromium");
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--window-size=1100,1400",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// The page as it ships, screenshotted: a PNG of the window's size.
fn screenshot(env: &Env, page: &Path) -> PathBuf {
    let png = page.with_extension("png");
    let out = chromium(&env.tmp.path().join("profile"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&png).expect("a screenshot");
    assert_eq!(&bytes[1..4], b"PNG");
    // IHDR: width and height, big-endian, at bytes 16..24
    let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((w, h), (1100, 1400));
    png
}

/// The page with the measuring script, as chromium's DOM after layout: `key=value` pairs.
fn measure(env: &Env, page: &Path) -> std::collections::BTreeMap<String, String> {
    let html = std::fs::read_to_string(page).unwrap();
    let csp = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .expect("the page forbids scripts");
    let end = csp + html[csp..].find("/>").unwrap() + 2;
    let body_end = html.rfind("</body>").unwrap();
    let measured = format!(
        "{}{}{MEASURE}{}",
        &html[..csp],
        &html[end..body_end],
        &html[body_end..]
    );
    let copy = page.with_extension("measured.html");
    std::fs::write(&copy, measured).unwrap();
    let out = chromium(&env.tmp.path().join("profile"))
        .args(["--dump-dom", "--virtual-time-budget=2000"])
        .arg(format!("file://{}", copy.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom
        .find("<pre id=\"measured\">")
        .unwrap_or_else(|| panic!("the script ran: {}", String::from_utf8_lossy(&out.stderr)));
    let text = &dom[start + "<pre id=\"measured\">".len()..];
    let text = &text[..text.find("</pre>").unwrap()];
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| {
            let v = v
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&");
            (k.to_string(), v)
        })
        .collect()
}

/// The charts of a page whose class includes `class`, by index.
fn charts_of(m: &std::collections::BTreeMap<String, String>, class: &str) -> Vec<String> {
    let n: usize = m["charts"].parse().unwrap();
    (0..n)
        .map(|i| format!("chart{i}"))
        .filter(|c| m[&format!("{c}.class")].split('.').any(|k| k == class))
        .collect()
}

/// What every chart keeps: drawn, labels apart, none clipped or on a point, a plain zero,
/// no repeated x label.
fn assert_readable(m: &std::collections::BTreeMap<String, String>, page: &str) {
    let n: usize = m["charts"].parse().unwrap();
    assert!(n > 0, "{page}: no chart drawn: {m:?}");
    for i in 0..n {
        let c = format!("chart{i}");
        let get = |k: &str| m[&format!("{c}.{k}")].as_str();
        let (w, h) = get("size").split_once('x').unwrap();
        assert!(
            w.parse::<u32>().unwrap() > 200 && h.parse::<u32>().unwrap() > 80,
            "{page} {c} is drawn: {}",
            get("size")
        );
        assert_eq!(get("overlapping"), "", "{page} {c}: labels overlap");
        assert_eq!(get("clipped"), "", "{page} {c}: labels outside the chart");
        assert_eq!(
            get("label-on-point"),
            "",
            "{page} {c}: a line's label on a point"
        );
        let y: Vec<&str> = get("y-labels")
            .split(',')
            .filter(|s| !s.is_empty())
            .collect();
        assert!(
            y.iter().all(|l| !l.starts_with("0.0") || l.len() < 4),
            "{page} {c}: y labels {y:?}"
        );
        // No value axis starts above zero (a 5% miss drawn as a cliff).
        if !y.is_empty() {
            assert!(
                y.contains(&"0"),
                "{page} {c}: the axis starts above zero: {y:?}"
            );
        }
        let x: Vec<&str> = get("x-labels")
            .split(',')
            .filter(|s| !s.is_empty())
            .collect();
        let uniq: std::collections::BTreeSet<&&str> = x.iter().collect();
        assert_eq!(uniq.len(), x.len(), "{page} {c}: x labels repeat: {x:?}");
    }
    let (doc, window) = m["page-width"].split_once('/').unwrap();
    assert!(
        doc.parse::<u32>().unwrap() <= window.parse::<u32>().unwrap(),
        "{page}: wider than the window: {}",
        m["page-width"]
    );
}

/// Run `k` (0 or 1) of day `day` (0 = yesterday): 11:00 and 13:00 UTC, so that the days
/// before today hold whole days whatever the hour the test runs at.
fn before_today(
    now: chrono::DateTime<chrono::FixedOffset>,
    day: u64,
    k: usize,
) -> chrono::DateTime<chrono::FixedOffset> {
    (now.date_naive() - chrono::Days::new(day + 1))
        .and_hms_opt(11 + 2 * k as u32, 0, 0)
        .unwrap()
        .and_utc()
        .fixed_offset()
}

#[test]
#[cfg_attr(not(have_chromium), ignore = "needs chromium")]
fn the_pages_render_in_chromium_with_readable_charts() {
    let env = Env::new();
    let now = chrono::Utc::now().fixed_offset();
    // (the small node's run is now; the others on whole days)
    // A node with three days of two runs each, passing; a fleet of it, a failing node and a
    // node with no runs of the policy's test.
    let mut node = String::new();
    let mut fleet = String::new();
    for (host, mb_s) in [("node-pass", 30.0), ("node-fail", 2.0)] {
        for day in 0..3 {
            for k in 0..2 {
                let t = before_today(now, day, k);
                let r = common::swimlane_record(host, "/data", t, mb_s * (1.0 + 0.1 * k as f64));
                let line = serde_json::to_string(&r).unwrap() + "\n";
                if host == "node-pass" {
                    node.push_str(&line);
                }
                fleet.push_str(&line);
            }
        }
    }
    let mut small = common::swimlane_record("node-small", "/data", now, 30.0);
    small.job.size = Some(1 << 20);
    fleet.push_str(&(serde_json::to_string(&small).unwrap() + "\n"));
    std::fs::write(&env.history, node).unwrap();
    let fleet_file = env.tmp.path().join("fleet.jsonl");
    std::fs::write(&fleet_file, fleet).unwrap();

    let report = env.tmp.path().join("report.html");
    env.cmd()
        .args(["report", "--host", "node-pass", "--format", "html", "-o"])
        .arg(&report)
        .assert()
        .code(0);
    let fleet_page = env.tmp.path().join("fleet.html");
    env.cmd()
        .args(["fleet", "--format", "html", "-o"])
        .arg(&fleet_page)
        .arg(&fleet_file)
        .assert()
        .code(1);
    // A real run, for the IOPS-inside-the-run chart.
    let run_page = env.tmp.path().join("run.html");
    env.small_run("psync")
        .arg("--export")
        .arg(format!("html={}", run_page.display()))
        .assert()
        .code(predicates::function::function(|c: &i32| *c != 2));

    for page in [&report, &fleet_page, &run_page] {
        screenshot(&env, page);
    }

    // The report: six runs on the chart, the threshold, three days with their mean.
    let m = measure(&env, &report);
    assert_eq!(m["verdict"], "PASS");
    assert_readable(&m, "report");
    // the runs of the policy's test are drawn and marked as passing
    assert!(m["pass-coloured"].contains("circle.run.pass"), "{m:?}");
    assert!(m["pass-coloured"].contains("rect.zone"), "{m:?}");
    assert!(m["check-marks"].parse::<usize>().unwrap() >= 6, "{m:?}");
    let runs = charts_of(&m, "runs");
    assert_eq!(runs.len(), 1, "{m:?}");
    assert_eq!(m[&format!("{}.circles", runs[0])], "6");
    assert_eq!(m[&format!("{}.threshold-lines", runs[0])], "1");
    assert!(m[&format!("{}.y-labels", runs[0])].split(',').count() >= 3);
    let days = charts_of(&m, "days");
    assert_eq!(days.len(), 1, "{m:?}");
    assert_eq!(m[&format!("{}.days", days[0])], "3");

    // The fleet: a bar per node, the failing one first, the passing one last.
    let m = measure(&env, &fleet_page);
    assert_eq!(m["verdict"], "FAIL");
    assert_readable(&m, "fleet");
    let nodes = charts_of(&m, "nodes");
    assert_eq!(nodes.len(), 1, "{m:?}");
    assert_eq!(m[&format!("{}.nodes", nodes[0])], "fail,inconclusive,pass");

    // The run: its IOPS every 500 ms from zero, against the threshold.
    let m = measure(&env, &run_page);
    assert_readable(&m, "run");
    let series = charts_of(&m, "series-run");
    assert_eq!(series.len(), 1, "{m:?}");
    let s = &series[0];
    assert!(m[&format!("{s}.polyline-points")].parse::<usize>().unwrap() >= 2);
    assert!(m[&format!("{s}.y-labels")].starts_with("0,"), "{m:?}");
    assert_eq!(m[&format!("{s}.threshold-lines")], "1");
    // The threshold judges a whole run, never a 500 ms sample: drawn as a labelled reference.
    let run_html = std::fs::read_to_string(&run_page).unwrap();
    assert!(
        run_html.contains("<line class=\"threshold reference\"")
            && run_html.contains(" for the whole run</text>"),
        "the series chart's threshold is not a labelled reference"
    );
}

#[test]
#[cfg_attr(not(have_chromium), ignore = "needs chromium")]
fn a_page_of_runs_that_are_not_the_policys_test_shows_no_pass_anywhere() {
    let env = Env::new();
    // fio's own output of the Swimlane job on psync, an engine Swimlane's policy does not list
    let page = env.tmp.path().join("psync.html");
    env.cmd()
        .arg("import")
        .arg(common::fixture("fio-3.33-psync-randwrite.txt"))
        .args(["--format", "html", "-o"])
        .arg(&page)
        .assert()
        .code(3);
    screenshot(&env, &page);
    let m = measure(&env, &page);
    assert_eq!(m["verdict"], "INCONCLUSIVE");
    assert_readable(&m, "psync");
    assert_eq!(m["pass-coloured"], "", "nothing drawn as a pass: {m:?}");
    assert_eq!(m["check-marks"], "0", "{m:?}");
    // the run over time, and its day's mean, drawn in neither verdict's colour
    assert_eq!(m["unjudged-points"], "2", "{m:?}");
}

#[test]
#[cfg_attr(not(have_chromium), ignore = "needs chromium")]
fn the_fleet_table_stays_within_the_page_with_long_directories() {
    let env = Env::new();
    let now = chrono::Utc::now().fixed_offset();
    // Kubernetes volumes: directories of 150 characters and more, without a space to break at.
    let mut fleet = String::new();
    let mut dirs = Vec::new();
    for (i, mb_s) in [30.0, 2.0, 25.0].into_iter().enumerate() {
        let dir = format!(
            "/var/lib/kubelet/pods/3f0c2a1e-5b7d-4c1a-9e8f-0a1b2c3d4e{i:02}/volumes/kubernetes.io~csi/pvc-0a1b2c3d-4e5f-6789-abcd-ef01234567{i:02}/mount/iopscheck-data"
        );
        // two runs on each of the three days before today, as the other fleet above
        for day in 0..3 {
            for k in 0..2 {
                let t = before_today(now, day, k);
                let r = common::swimlane_record(&format!("worker-{i}"), &dir, t, mb_s);
                fleet.push_str(&(serde_json::to_string(&r).unwrap() + "\n"));
            }
        }
        dirs.push(dir);
    }
    let fleet_file = env.tmp.path().join("fleet.jsonl");
    std::fs::write(&fleet_file, fleet).unwrap();
    let page = env.tmp.path().join("fleet-long.html");
    env.cmd()
        .args(["fleet", "--format", "html", "-o"])
        .arg(&page)
        .arg(&fleet_file)
        .assert()
        .code(1);
    screenshot(&env, &page);
    let m = measure(&env, &page);
    assert_eq!(m["verdict"], "FAIL");
    assert_eq!(m["scrolling"], "", "a table scrolls sideways: {m:?}");
    let (table, main): (u32, u32) = (
        m["nodes-table-width"].parse().unwrap(),
        m["main-width"].parse().unwrap(),
    );
    assert!(
        table > 0 && table <= main,
        "the nodes table is {table}px wide in {main}px: {m:?}"
    );
    let (doc, window) = m["page-width"].split_once('/').unwrap();
    assert!(
        doc.parse::<u32>().unwrap() <= window.parse::<u32>().unwrap(),
        "{m:?}"
    );
    // Every directory whole, in its cell and in its tooltip.
    let html = std::fs::read_to_string(&page).unwrap();
    let doc = scraper::Html::parse_document(&html);
    let sel = scraper::Selector::parse("#nodes td.path").unwrap();
    let cells: Vec<(String, String)> = doc
        .select(&sel)
        .map(|td| {
            (
                td.text().collect::<String>(),
                td.value().attr("title").unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(cells.len(), 3);
    for (text, title) in &cells {
        assert!(dirs.contains(text), "{text}");
        assert_eq!(text, title);
    }
}
