//! Edits on a config's value tree: laying overrides over a preset, and
//! setting the field a sweep axis names.

use toml::{Table, Value};

/// Lays `over` onto `base`: tables merge key by key, anything else replaces.
pub fn merge(base: &mut Table, over: &Table) {
    for (key, value) in over {
        match (base.get_mut(key), value) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Sets the field at `path` to `value`, creating the last key if absent (an
/// optional field a preset leaves out). In an array of tables a segment picks
/// the elements whose `name` equals it, `*` picks all, a number picks one.
/// Returns how many fields were set: 0 when the path leads nowhere.
pub fn set(table: &mut Table, path: &[String], value: &Value) -> usize {
    let Some((seg, rest)) = path.split_first() else {
        return 0;
    };
    if rest.is_empty() {
        table.insert(seg.clone(), value.clone());
        return 1;
    }
    match table.get_mut(seg) {
        Some(Value::Table(t)) => set(t, rest, value),
        Some(Value::Array(items)) => set_in_array(items, rest, value),
        Some(_) => 0,
        None => {
            let mut t = Table::new();
            let n = set(&mut t, rest, value);
            if n > 0 {
                table.insert(seg.clone(), Value::Table(t));
            }
            n
        }
    }
}

/// Whether `table` writes a value at `path` (tables only, no arrays).
pub fn holds(table: &Table, path: &[&str]) -> bool {
    let Some((seg, rest)) = path.split_first() else {
        return false;
    };
    match (table.get(*seg), rest.is_empty()) {
        (Some(_), true) => true,
        (Some(Value::Table(t)), false) => holds(t, rest),
        _ => false,
    }
}

fn set_in_array(items: &mut [Value], path: &[String], value: &Value) -> usize {
    let (seg, rest) = path.split_first().expect("callers pass a non-empty path");
    let index = seg.parse::<usize>().ok();
    items
        .iter_mut()
        .enumerate()
        .filter_map(|(i, item)| match item {
            Value::Table(t) => Some((i, t)),
            _ => None,
        })
        .filter(|(i, t)| {
            seg == "*"
                || index == Some(*i)
                || t.get("name").and_then(Value::as_str) == Some(seg.as_str())
        })
        .map(|(_, t)| {
            if rest.is_empty() {
                0
            } else {
                set(t, rest, value)
            }
        })
        .sum()
}

/// A value as a sweep's point label shows it: `64`, `roundup_pow_of_two(cpus)`, `true`.
pub fn display(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Table {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn merge_keeps_what_is_not_overridden() {
        let mut base = parse("a = 1\n[t]\nx = 1\ny = 2\n");
        merge(&mut base, &parse("[t]\ny = 3\nz = 4\n"));
        assert_eq!(base, parse("a = 1\n[t]\nx = 1\ny = 3\nz = 4\n"));
    }

    #[test]
    fn set_reaches_named_array_elements() {
        let mut doc = parse(
            "[[table]]\nname = \"a\"\nslots = \"1\"\n[[table]]\nname = \"b\"\nslots = \"2\"\n",
        );
        let path = |p: &str| p.split('.').map(String::from).collect::<Vec<_>>();
        let v = Value::String("64".into());
        assert_eq!(set(&mut doc, &path("table.b.slots"), &v), 1);
        assert_eq!(doc["table"][0]["slots"].as_str(), Some("1"));
        assert_eq!(doc["table"][1]["slots"].as_str(), Some("64"));
        assert_eq!(
            set(&mut doc, &path("table.*.align"), &Value::Integer(64)),
            2
        );
        assert_eq!(set(&mut doc, &path("table.c.slots"), &v), 0);
        assert_eq!(set(&mut doc, &path("machine.topology.nr_cpus"), &v), 1);
        assert_eq!(doc["machine"]["topology"]["nr_cpus"].as_str(), Some("64"));
    }
}
