// SPDX-License-Identifier: GPL-2.0

//! Plain-text and CSV tables.

/// A table with a title, headers and rows of cells.
#[derive(Clone, Debug, Default)]
pub struct Table {
    /// Title printed above the table (a `#` comment in CSV).
    pub title: String,
    /// Column headers.
    pub head: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with headers.
    pub fn new(title: &str, head: &[&str]) -> Self {
        Table {
            title: title.to_string(),
            head: head.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Renders as an aligned text table (reStructuredText "simple table").
    pub fn text(&self) -> String {
        let n = self.head.len();
        let mut w: Vec<usize> = self.head.iter().map(|h| h.len()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate().take(n) {
                w[i] = w[i].max(c.len());
            }
        }
        let rule: String = w
            .iter()
            .map(|&x| "=".repeat(x))
            .collect::<Vec<_>>()
            .join("  ");
        let line = |cells: &[String]| {
            cells
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{:<width$}", c, width = w[i]))
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_string()
        };
        let mut s = format!(
            "{}\n\n{}\n{}\n{}\n",
            self.title,
            rule,
            line(&self.head),
            rule
        );
        for r in &self.rows {
            s += &line(r);
            s += "\n";
        }
        s += &rule;
        s += "\n";
        s
    }

    /// Renders as CSV.
    pub fn csv(&self) -> String {
        let mut s = format!("# {}\n{}\n", self.title, self.head.join(","));
        for r in &self.rows {
            s += &r.join(",");
            s += "\n";
        }
        s
    }
}

/// `part / whole` as a signed percentage reduction ("35%" = 35 % fewer).
pub fn reduction(part: f64, whole: f64) -> String {
    if whole == 0.0 {
        return "-".into();
    }
    format!("{:.0}%", 100.0 * (1.0 - part / whole))
}

/// `part / whole` as a ratio with two decimals.
pub fn ratio(part: f64, whole: f64) -> String {
    if whole == 0.0 {
        return "-".into();
    }
    format!("{:.2}", part / whole)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_reductions_and_rendering() {
        assert_eq!(reduction(65.0, 100.0), "35%");
        assert_eq!(reduction(120.0, 100.0), "-20%");
        assert_eq!(reduction(1.0, 0.0), "-");
        assert_eq!(ratio(1.0, 3.0), "0.33");
        assert_eq!(ratio(1.0, 0.0), "-");

        let mut t = Table::new("T", &["a", "bbb"]);
        t.row(vec!["xxxx".into(), "1".into()]);
        t.row(vec!["y".into(), "".into()]);
        assert_eq!(t.csv(), "# T\na,bbb\nxxxx,1\ny,\n");
        assert_eq!(
            t.text(),
            "T\n\n====  ===\na     bbb\n====  ===\nxxxx  1\ny\n====  ===\n"
        );
    }
}
