//! Tables that fit the terminal without wrapping a cell. A figure or a name split over two
//! lines is misread, so cells are never wrapped: a table that is too wide is offered in
//! narrower layouts (columns stacked into one cell, least important columns dropped) by the
//! command that builds it, and when none fits, its rows are printed as stacked records
//! ("cards"), one labelled line per column, word-wrapped.

use comfy_table::{ContentArrangement, Table, presets};

/// A table in the house style, laid out as built: never wrapped by comfy-table itself
/// (which would break words inside cells and ignore `COLUMNS` when piped).
pub fn table() -> Table {
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    t
}

/// A table of the view (`view.rs`) in the house style: each column's title with its unit on a
/// second line, each cell with its column's alignment. The terminal's only say is the layout.
pub fn from_view(v: &super::view::Table) -> Table {
    let mut t = table();
    t.set_header(v.columns.iter().map(|c| {
        if c.unit.is_empty() {
            c.title.clone()
        } else {
            format!("{}\n{}", c.title, c.unit)
        }
    }));
    for row in &v.rows {
        t.add_row(row.cells.iter().map(|c| {
            let cell = comfy_table::Cell::new(&c.text);
            match c.align {
                super::view::Align::Left => cell,
                super::view::Align::Right => cell.set_alignment(comfy_table::CellAlignment::Right),
            }
        }));
    }
    t
}

/// The widest line of `t` as printed.
pub fn width(t: &Table) -> usize {
    t.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// The first of `layouts` (widest first) that fits `width`, printed; else the first one's rows
/// as cards.
pub fn first_fitting(layouts: &[Table], width_: usize) -> String {
    for t in layouts {
        if width(t) <= width_ {
            return t.to_string();
        }
    }
    layouts
        .first()
        .map(|t| cards(t, width_))
        .unwrap_or_default()
}

/// Each row of `t` as a record: its first cell as a heading, then one line per other column,
/// `  title  value`, the values word-wrapped to `width` under themselves. Empty cells are
/// left out.
pub fn cards(t: &Table, width: usize) -> String {
    let titles: Vec<String> = t
        .header()
        .map(|h| {
            h.cell_iter()
                .map(|c| c.content().split_whitespace().collect::<Vec<_>>().join(" "))
                .collect()
        })
        .unwrap_or_default();
    let pad = titles
        .iter()
        .skip(1)
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = Vec::new();
    for row in t.row_iter() {
        let cells: Vec<String> = row.cell_iter().map(|c| c.content()).collect();
        let Some(head) = cells.first() else { continue };
        if !out.is_empty() {
            out.push(String::new());
        }
        out.push(crate::terminal::wrap("", &head.replace('\n', " "), width));
        for (i, value) in cells.iter().enumerate().skip(1) {
            if value.trim().is_empty() {
                continue;
            }
            let title = titles.get(i).map(String::as_str).unwrap_or("");
            for (k, line) in value.lines().enumerate() {
                let label = if k == 0 {
                    format!("  {title:<pad$}  ")
                } else {
                    " ".repeat(pad + 4)
                };
                out.push(crate::terminal::wrap(&label, line.trim(), width));
            }
        }
    }
    out.join("\n")
}

/// Hides columns of `t`, in the order given, until it fits `width`. Returns what was hidden.
pub fn hide_until_fits(t: &mut Table, hideable: &[(usize, String)], width_: usize) -> Vec<String> {
    let mut hidden = Vec::new();
    for (i, name) in hideable {
        if width(t) <= width_ {
            break;
        }
        if let Some(c) = t.column_mut(*i) {
            c.set_constraint(comfy_table::ColumnConstraint::Hidden);
            hidden.push(name.clone());
        }
    }
    hidden
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wide() -> Table {
        let mut t = table();
        t.set_header(vec!["name", "what it does", "checks"]);
        t.add_row(vec![
            "swimlane",
            "Swimlane Platform / Turbine storage, 3000 IOPS per node (4k random writes)",
            "write_iops_formula ≥ 3000 IOPS\nwrite_bw_mb_s ≥ 11.7 MB/s",
        ]);
        t
    }

    #[test]
    fn a_table_too_wide_for_every_layout_becomes_cards_within_the_width() {
        let t = wide();
        assert!(width(&t) > 80);
        let s = first_fitting(&[t], 80);
        assert!(s.lines().all(|l| l.chars().count() <= 80), "{s}");
        assert!(s.starts_with("swimlane\n  what it does  Swimlane"), "{s}");
        // Each line of a multi-line cell keeps its own line, under the value column.
        assert!(s.contains("\n  checks        write_iops_formula ≥ 3000 IOPS\n                write_bw_mb_s ≥ 11.7 MB/s"), "{s}");
        // No word is lost or split.
        let words = |x: &str| x.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        for w in words("Swimlane Platform / Turbine storage, 3000 IOPS per node (4k random writes)")
        {
            assert!(words(&s).contains(&w), "{w}: {s}");
        }
    }

    #[test]
    fn the_first_layout_that_fits_is_printed_as_a_table() {
        let s = first_fitting(&[wide()], 200);
        assert_eq!(s, wide().to_string());
    }
}
