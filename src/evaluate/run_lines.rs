//! One line of text for each judged run (its deviations, "" for the policy's test), held as a
//! small index into the distinct lines: the runs of one context share theirs, and a report
//! over a year of runs holds 4 bytes a run here, not a `String` (24) each.

/// Each run's line, in run order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunLines {
    /// The distinct lines, in the order first met.
    lines: Vec<String>,
    /// Each run's line, as its place in `lines`.
    of_run: Vec<u32>,
}

impl RunLines {
    /// Adds the next run's line.
    pub fn push(&mut self, line: &str) {
        // The line of the run before is the likeliest, then any other (few in practice).
        let i = match self.of_run.last() {
            Some(&k) if self.lines[k as usize] == line => k as usize,
            _ => match self.lines.iter().position(|l| l == line) {
                Some(i) => i,
                None => {
                    self.lines.push(line.to_string());
                    self.lines.len() - 1
                }
            },
        };
        self.of_run
            .push(u32::try_from(i).expect("fewer distinct lines than runs"));
    }

    /// The line of run `i` (from 0), None past the last run.
    pub fn get(&self, i: usize) -> Option<&str> {
        self.of_run.get(i).map(|&k| self.lines[k as usize].as_str())
    }

    pub fn len(&self) -> usize {
        self.of_run.len()
    }

    pub fn is_empty(&self) -> bool {
        self.of_run.is_empty()
    }

    /// Every run's line, in run order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.of_run.iter().map(|&k| self.lines[k as usize].as_str())
    }
}

impl<S: AsRef<str>> FromIterator<S> for RunLines {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> RunLines {
        let mut lines = RunLines::default();
        for l in iter {
            lines.push(l.as_ref());
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::RunLines;

    #[test]
    fn each_run_reads_back_its_own_line_and_equal_lines_are_held_once() {
        let given = ["", "", "size 64 MiB", "", "size 64 MiB", "bs 8k"];
        let lines: RunLines = given.iter().collect();
        assert_eq!(lines.len(), given.len());
        assert_eq!(lines.iter().collect::<Vec<_>>(), given);
        for (i, l) in given.iter().enumerate() {
            assert_eq!(lines.get(i), Some(*l));
        }
        assert_eq!(lines.get(given.len()), None);
        assert_eq!(lines.lines.len(), 3, "{:?}", lines.lines);
    }
}
