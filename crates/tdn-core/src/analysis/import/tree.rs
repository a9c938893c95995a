//! Putting spans (OTLP) or observations (Langfuse) in execution order: a parent before its
//! children, siblings by start time, roots by start time. Linear apart from the sorts, iterative
//! (a chain of 100,000 spans does not recurse), and safe on cycles and on parents that are not in
//! the file. [`UniqueIds`] gives each node a step id of its own when ids repeat.

use std::collections::{HashMap, HashSet};

/// Step ids made unique: the first use of an id keeps it, a repeat gets the next free suffix
/// (`-2`, `-3`, ...). Each base remembers its last suffix, so a file where one id repeats 100,000
/// times stays linear.
#[derive(Debug, Default)]
pub struct UniqueIds {
    used: HashSet<String>,
    /// Per repeated id: the last suffix given and how many repeats there were.
    next: HashMap<String, (usize, usize)>,
    /// The ids that repeated, in the order of their first repeat.
    repeated: Vec<String>,
}

/// At most this many repeated ids are named, one message each; the rest are counted in one.
pub const MAX_REPEAT_MESSAGES: usize = 20;

impl UniqueIds {
    /// An empty set with room for `n` ids.
    pub fn with_capacity(n: usize) -> Self {
        UniqueIds {
            used: HashSet::with_capacity(n),
            next: HashMap::new(),
            repeated: Vec::new(),
        }
    }

    /// The id to use for `base`: `base` itself the first time, else `base-N` with the smallest
    /// N above the last one given for `base` that no other id took. The flag says it was renamed.
    pub fn claim(&mut self, base: &str) -> (String, bool) {
        if self.used.insert(base.to_owned()) {
            return (base.to_owned(), false);
        }
        if !self.next.contains_key(base) {
            self.repeated.push(base.to_owned());
        }
        let (n, count) = self.next.entry(base.to_owned()).or_insert((1, 0));
        *count += 1;
        loop {
            *n += 1;
            let id = format!("{base}-{n}");
            if self.used.insert(id.clone()) {
                return (id, true);
            }
        }
    }
}

impl UniqueIds {
    /// One message per repeated id (`what` names the ids: "span id"), saying how many times it
    /// appeared and which step ids the repeats became; at most [`MAX_REPEAT_MESSAGES`], then
    /// one counting the rest.
    pub fn repeat_messages(&self, what: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .repeated
            .iter()
            .take(MAX_REPEAT_MESSAGES)
            .map(|base| {
                let (last, repeats) = self.next.get(base).copied().unwrap_or((2, 1));
                let times = repeats + 1;
                if times == 2 {
                    format!("{what} '{base}' appears twice; the repeat became step '{base}-{last}'")
                } else {
                    format!(
                        "{what} '{base}' appears {times} times; the repeats became steps '{base}-2' to '{base}-{last}' (suffixes other ids already took are skipped)"
                    )
                }
            })
            .collect();
        let rest = self.repeated.len().saturating_sub(MAX_REPEAT_MESSAGES);
        if rest > 0 {
            out.push(format!(
                "{rest} more {what}s appear more than once; their repeats got the suffixes -2, -3, ..."
            ));
        }
        out
    }
}

/// One node as the ordering sees it.
#[derive(Clone, Debug)]
pub struct Node<'a> {
    /// Its id (the first of two equal ids wins as a parent).
    pub id: &'a str,
    /// The parent's id, when recorded.
    pub parent: Option<&'a str>,
    /// Start time in any unit that orders; missing times sort after recorded ones.
    pub start: Option<i128>,
}

/// The order of the nodes and each one's parent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ordered {
    /// Node positions (into the input slice) in execution order; every node appears once.
    pub order: Vec<usize>,
    /// For each input node, its parent's input position, only when that parent comes earlier in
    /// `order` (so parents never cycle).
    pub parent: Vec<Option<usize>>,
    /// How many nodes named a parent that is not in the input (they were placed at the top level).
    pub missing_parents: usize,
    /// How many nodes sat on a cycle of parents (the cycle was broken at the earliest one).
    pub cycles: usize,
}

/// Orders `nodes` depth first: each root (no parent, or a parent not in the input) by start time,
/// then its children by start time, and so on. Nodes with equal start keep their input order.
pub fn order(nodes: &[Node<'_>]) -> Ordered {
    let n = nodes.len();
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(n);
    for (i, node) in nodes.iter().enumerate() {
        first.entry(node.id).or_insert(i);
    }
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    let mut named_parent: Vec<Option<usize>> = vec![None; n];
    let mut missing_parents = 0;
    for (i, node) in nodes.iter().enumerate() {
        match node.parent {
            None => roots.push(i),
            Some(p) => match first.get(p) {
                Some(&pi) if pi != i => {
                    if let Some(c) = children.get_mut(pi) {
                        c.push(i);
                    }
                    named_parent[i] = Some(pi);
                }
                Some(_) => roots.push(i),
                None => {
                    missing_parents += 1;
                    roots.push(i);
                }
            },
        }
    }
    let key = |i: &usize| {
        let s = nodes.get(*i).and_then(|x| x.start);
        (s.is_none(), s.unwrap_or(0), *i)
    };
    roots.sort_by_key(key);
    for c in &mut children {
        c.sort_by_key(key);
    }

    let mut out = Ordered {
        order: Vec::with_capacity(n),
        parent: vec![None; n],
        missing_parents,
        cycles: 0,
    };
    let mut emitted = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut walk = |start: usize, out: &mut Ordered, emitted: &mut Vec<bool>| {
        stack.push(start);
        while let Some(i) = stack.pop() {
            if emitted.get(i).copied().unwrap_or(true) {
                continue;
            }
            emitted[i] = true;
            out.order.push(i);
            if let Some(p) = named_parent[i]
                && emitted.get(p).copied().unwrap_or(false)
                && i != start
            {
                out.parent[i] = Some(p);
            }
            if let Some(c) = children.get(i) {
                stack.extend(c.iter().rev().copied());
            }
        }
    };
    for &r in &roots {
        walk(r, &mut out, &mut emitted);
    }
    // Whatever no root reached sits on a cycle of parents or below one: break each cycle at its
    // earliest node, whose walk then reaches the rest of the cycle and everything below it.
    let cycles = cycles_among(&named_parent, &emitted);
    out.cycles = cycles.iter().map(Vec::len).sum();
    let mut starts: Vec<usize> = cycles
        .iter()
        .filter_map(|c| c.iter().copied().min_by_key(key))
        .collect();
    starts.sort_by_key(key);
    for r in starts {
        walk(r, &mut out, &mut emitted);
    }
    out
}

/// The cycles of parents among the nodes not yet emitted, each as its members. Every such node
/// has a parent (roots were emitted), so following parents from it ends on a cycle. Each node is
/// followed once: linear.
fn cycles_among(parent: &[Option<usize>], emitted: &[bool]) -> Vec<Vec<usize>> {
    const NEW: u8 = 0;
    const ON_PATH: u8 = 1;
    const DONE: u8 = 2;
    let mut state: Vec<u8> = emitted
        .iter()
        .map(|&e| if e { DONE } else { NEW })
        .collect();
    let mut cycles = Vec::new();
    let mut path: Vec<usize> = Vec::new();
    for start in 0..parent.len() {
        let mut at = Some(start);
        while let Some(i) = at {
            match state.get(i).copied() {
                Some(NEW) => {
                    state[i] = ON_PATH;
                    path.push(i);
                    at = parent.get(i).copied().flatten();
                }
                Some(ON_PATH) => {
                    if let Some(from) = path.iter().rposition(|&x| x == i) {
                        cycles.push(path[from..].to_vec());
                    }
                    at = None;
                }
                _ => at = None,
            }
        }
        for &i in &path {
            state[i] = DONE;
        }
        path.clear();
    }
    cycles
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node<'a>(id: &'a str, parent: Option<&'a str>, start: i128) -> Node<'a> {
        Node {
            id,
            parent,
            start: Some(start),
        }
    }

    #[test]
    fn parents_come_first_and_siblings_by_start() {
        let nodes = [
            node("c2", Some("r"), 30),
            node("r", None, 0),
            node("c1", Some("r"), 10),
            node("g", Some("c1"), 20),
        ];
        let o = order(&nodes);
        assert_eq!(o.order, vec![1, 2, 3, 0]);
        assert_eq!(o.parent, vec![Some(1), None, Some(1), Some(2)]);
        assert_eq!((o.missing_parents, o.cycles), (0, 0));
    }

    #[test]
    fn a_missing_parent_makes_a_root_and_a_cycle_is_broken() {
        let nodes = [
            node("a", Some("b"), 5),
            node("b", Some("a"), 1),
            node("x", Some("nowhere"), 3),
            node("self", Some("self"), 4),
        ];
        let o = order(&nodes);
        assert_eq!(o.missing_parents, 1);
        assert_eq!(o.cycles, 2);
        // Roots by start: x (3), self (4); then the cycle from its earliest node, b (1).
        assert_eq!(o.order, vec![2, 3, 1, 0]);
        assert_eq!(o.parent, vec![Some(1), None, None, None]);
    }

    #[test]
    fn a_node_below_a_cycle_keeps_its_parent() {
        // a and b name each other; c, the earliest, is b's child and not on the cycle.
        let nodes = [
            node("a", Some("b"), 20),
            node("b", Some("a"), 30),
            node("c", Some("b"), 10),
        ];
        let o = order(&nodes);
        assert_eq!(o.cycles, 2);
        assert_eq!(o.order, vec![0, 1, 2]);
        assert_eq!(o.parent, vec![None, Some(0), Some(1)]);
    }

    #[test]
    fn repeated_ids_get_the_next_free_suffix() {
        let mut u = UniqueIds::with_capacity(4);
        assert_eq!(u.claim("a"), ("a".to_owned(), false));
        assert_eq!(u.claim("a-2"), ("a-2".to_owned(), false));
        assert_eq!(u.claim("a"), ("a-3".to_owned(), true));
        assert_eq!(u.claim("a"), ("a-4".to_owned(), true));
        assert_eq!(u.claim("b"), ("b".to_owned(), false));
    }

    #[test]
    fn repeats_are_said_once_per_id_and_at_most_twenty_ids_are_named() {
        let mut u = UniqueIds::default();
        for id in ["a", "a", "a", "b", "b"] {
            u.claim(id);
        }
        assert_eq!(
            u.repeat_messages("span id"),
            vec![
                "span id 'a' appears 3 times; the repeats became steps 'a-2' to 'a-3' (suffixes other ids already took are skipped)",
                "span id 'b' appears twice; the repeat became step 'b-2'",
            ]
        );
        let mut many = UniqueIds::default();
        for k in 0..25 {
            many.claim(&format!("x{k}"));
            many.claim(&format!("x{k}"));
        }
        let m = many.repeat_messages("span id");
        assert_eq!(m.len(), MAX_REPEAT_MESSAGES + 1);
        assert!(
            m[MAX_REPEAT_MESSAGES].starts_with("5 more span ids"),
            "{m:?}"
        );
    }

    #[test]
    fn one_id_repeated_many_times_is_renamed_in_one_pass() {
        let mut u = UniqueIds::with_capacity(100_000);
        let mut last = String::new();
        for _ in 0..100_000 {
            last = u.claim("s").0;
        }
        assert_eq!(last, "s-100000");
    }

    #[test]
    fn a_deep_chain_does_not_recurse() {
        let ids: Vec<String> = (0..100_000).map(|i| format!("n{i}")).collect();
        let nodes: Vec<Node<'_>> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| Node {
                id,
                parent: i
                    .checked_sub(1)
                    .and_then(|p| ids.get(p))
                    .map(String::as_str),
                start: None,
            })
            .collect();
        let o = order(&nodes);
        assert_eq!(o.order.len(), 100_000);
        assert_eq!(o.order.last(), Some(&99_999));
    }
}
