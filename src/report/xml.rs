//! Escaping for the XML-based formats (JUnit, and HTML written as well-formed XHTML), so a
//! host name, directory or policy text can never break the document or inject markup.

/// Characters XML 1.0 cannot carry, even escaped (C0 controls other than tab, newline and
/// carriage return; U+FFFE, U+FFFF), or discourages (DEL and C1). They become U+FFFD.
fn allowed(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || !(c.is_control() || matches!(c, '\u{fffe}' | '\u{ffff}'))
}

/// Text content of an element.
pub fn text(s: &str) -> String {
    escape(s, false)
}

/// An attribute value in double quotes. Newlines and tabs are written as character references,
/// since a parser would otherwise normalise them to spaces.
pub fn attr(s: &str) -> String {
    escape(s, true)
}

fn escape(s: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\'' if attribute => out.push_str("&#39;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\r' if attribute => out.push_str("&#13;"),
            '\t' if attribute => out.push_str("&#9;"),
            c if allowed(c) => out.push(c),
            _ => out.push('\u{fffd}'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_control_characters_are_neutralised() {
        assert_eq!(text("a<b & c>d"), "a&lt;b &amp; c&gt;d");
        assert_eq!(text("]]>"), "]]&gt;");
        assert_eq!(text("bell\u{7}"), "bell\u{fffd}");
        assert_eq!(
            attr("say \"hi\"\n'x'"),
            "say &quot;hi&quot;&#10;&#39;x&#39;"
        );
        assert_eq!(text("µs ≥ 3000"), "µs ≥ 3000");
    }
}
