//! The config's text as written: where each key and value sits, so every
//! error can name the file, line and column a user has to fix.

use std::ops::Range;
use toml_edit::{ImDocument, Item, TableLike, Value};

/// A mistake in a config, located in its file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct ConfigError {
    pub file: String,
    /// 1-based; 0 when the mistake has no place in the text (an unreadable file).
    pub line: usize,
    pub column: usize,
    pub message: String,
}

pub struct Source {
    /// The file as the user named it (or "default" for the embedded config).
    pub file: String,
    pub text: String,
    doc: ImDocument<String>,
}

impl Source {
    /// Parses the text; a TOML syntax error is the first error a user sees.
    pub fn parse(file: &str, text: &str) -> Result<Source, ConfigError> {
        match ImDocument::parse(text.to_string()) {
            Ok(doc) => Ok(Source {
                file: file.to_string(),
                text: text.to_string(),
                doc,
            }),
            Err(e) => {
                let at = e.span().map_or(0, |s| s.start);
                let message = format!("TOML syntax: {}", e.message().trim_end());
                Err(Source::at(file, text, at, message))
            }
        }
    }

    fn at(file: &str, text: &str, offset: usize, message: String) -> ConfigError {
        let before = &text[..offset.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        ConfigError {
            file: file.to_string(),
            line,
            column,
            message: one_line(&message),
        }
    }

    /// An error at a byte span of the text (its start).
    pub fn error_at(&self, span: Option<Range<usize>>, message: impl Into<String>) -> ConfigError {
        Source::at(
            &self.file,
            &self.text,
            span.map_or(0, |s| s.start),
            message.into(),
        )
    }

    /// An error at the deepest part of `path` the text holds: the key if the
    /// whole path is written out, else its nearest written ancestor.
    pub fn error_at_path(&self, path: &[String], message: impl Into<String>) -> ConfigError {
        self.error_at(self.span_of(path), message)
    }

    /// The span of the value at `path` (the key's span for a table, so that
    /// `[machine]` points at its header), or of its nearest written ancestor.
    /// Numeric segments index arrays (`table.1.slots` is the second `[[table]]`).
    pub fn span_of(&self, path: &[String]) -> Option<Range<usize>> {
        find(Node::Item(self.doc.as_item()), path, None)
    }

    /// Keys of the top-level table `section` in the order written, with their
    /// spans and the spans of their values.
    pub fn keys_in_order(&self, section: &str) -> Vec<(String, Option<Range<usize>>)> {
        self.doc
            .get(section)
            .and_then(Item::as_table_like)
            .map(|t| t.iter().map(|(k, _)| k.to_string()).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .map(|k| {
                let span = self.span_of(&[section.to_string(), k.clone()]);
                (k, span)
            })
            .collect()
    }
}

#[derive(Clone, Copy)]
enum Node<'a> {
    Item(&'a Item),
    Table(&'a toml_edit::Table),
    Value(&'a Value),
}

impl<'a> Node<'a> {
    /// The child at one path segment, with the span that names it.
    fn child(self, seg: &str) -> Option<(Option<Range<usize>>, Node<'a>)> {
        let index = seg.parse::<usize>().ok();
        match self {
            Node::Item(Item::ArrayOfTables(tables)) => {
                let t = tables.get(index?)?;
                Some((t.span(), Node::Table(t)))
            }
            Node::Item(Item::Value(v)) => Node::Value(v).child(seg),
            Node::Item(item) => key_in(item.as_table_like()?, seg),
            Node::Table(t) => key_in(t, seg),
            Node::Value(Value::Array(values)) => {
                let v = values.get(index?)?;
                Some((v.span(), Node::Value(v)))
            }
            Node::Value(v) => key_in(v.as_inline_table()?, seg),
        }
    }
}

fn find(node: Node, path: &[String], best: Option<Range<usize>>) -> Option<Range<usize>> {
    let Some((seg, rest)) = path.split_first() else {
        return best;
    };
    match node.child(seg) {
        Some((span, child)) => find(child, rest, span.or(best)),
        None => best,
    }
}

/// A key's place: its value's span for a plain value, the key's otherwise.
fn key_in<'a>(table: &'a dyn TableLike, key: &str) -> Option<(Option<Range<usize>>, Node<'a>)> {
    let (k, item) = table.get_key_value(key)?;
    let span = match item {
        Item::Value(v) if !v.is_inline_table() && !v.is_array() => v.span().or(k.span()),
        _ => k.span().or(item.span()),
    };
    Some((span, Node::Item(item)))
}

/// The longest message an error carries: values are quoted short
/// (`super::echo`), so only a message built from many of them is cut.
const MAX_MESSAGE_CHARS: usize = 2000;

/// serde and toml messages may span lines (snippets, hints); a config error
/// is one line, of at most [`MAX_MESSAGE_CHARS`] characters.
fn one_line(message: &str) -> String {
    let line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(MAX_MESSAGE_CHARS) {
        None => line,
        Some((end, _)) => format!("{}…", &line[..end]),
    }
}
