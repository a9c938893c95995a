//! Which tools change the state of the world (docs/how-it-decides.md, "What changes state"),
//! read from the tool itself: the run marks it `mutates`, its name opens with an action verb
//! (`cancel_order`, `createEvent`, `send-email`), or its description does ("Cancel a pending
//! order"). No list of any one benchmark's tool names. Pure; no I/O.

use crate::analysis::model::{Run, Tool};

/// First words of a tool name that say the tool changes things (`create_event`, `issueRefund`),
/// used for claims of actions when the run marks no tool `mutates` (imported runs often do not).
pub const ACTION_NAME_WORDS: &[&str] = &[
    "create",
    "book",
    "schedule",
    "reschedule",
    "rebook",
    "send",
    "email",
    "cancel",
    "refund",
    "update",
    "delete",
    "remove",
    "add",
    "pay",
    "charge",
    "transfer",
    "submit",
    "place",
    "reserve",
    "issue",
    "write",
    "save",
    "post",
    "modify",
    "change",
    "set",
    "insert",
    "upsert",
    "put",
    "patch",
    "approve",
    "confirm",
    "order",
    "buy",
    "purchase",
    "ship",
    "register",
    "apply",
    "close",
    "move",
    "assign",
    "grant",
    "revoke",
    "publish",
    "exchange",
    "return",
    "credit",
    "upgrade",
    "downgrade",
    "activate",
    "deactivate",
    "renew",
    "notify",
];

/// True when a call to the tool named `name` changes things: the run's tool of that name is
/// marked `mutates`, or its name or description opens with an action verb. A tool the run does
/// not list is read by its name alone.
pub fn changes_state(run: &Run, name: &str) -> bool {
    match run.tool(name) {
        Some(t) => tool_changes_state(t),
        None => name_says_action(name),
    }
}

/// [`changes_state`] for a tool the run lists.
pub fn tool_changes_state(t: &Tool) -> bool {
    t.mutates
        || name_says_action(&t.name)
        || t.description
            .as_deref()
            .is_some_and(description_says_action)
}

/// The name's first word is an action verb: `create` of `create_event`, `createEvent`,
/// `Create-Event`.
pub fn name_says_action(name: &str) -> bool {
    ACTION_NAME_WORDS.contains(&first_word(name).as_str())
}

/// The description opens with an action verb in its base form, as a command ("Cancel a pending
/// order", "Book a reservation"). A verb in the third person is not read: "Returns the weather"
/// describes what a look-up gives back.
fn description_says_action(d: &str) -> bool {
    let word: String = d
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphabetic())
        .flat_map(char::to_lowercase)
        .collect();
    ACTION_NAME_WORDS.contains(&word.as_str())
}

/// The first word of a tool name in lower case: `create` of `create_event` and `createEvent`.
pub fn first_word(name: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() || (prev_lower && c.is_uppercase()) {
            if out.is_empty() {
                continue;
            }
            break;
        }
        prev_lower = c.is_lowercase();
        out.extend(c.to_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::RunStatus;

    fn tool(name: &str, description: Option<&str>, mutates: bool) -> Tool {
        Tool {
            name: name.into(),
            description: description.map(str::to_owned),
            mutates,
            ..Tool::default()
        }
    }

    #[test]
    fn a_tool_changes_state_by_its_mark_its_name_or_its_description() {
        // Names from several frameworks' conventions.
        for name in [
            "cancel_pending_order",
            "bookReservation",
            "Send-Email",
            "modify_user_address",
            "exchange_delivered_order_items",
            "return_delivered_order_items",
            "transfer_funds",
            "delete_file",
        ] {
            assert!(name_says_action(name), "{name}");
        }
        for name in [
            "get_order_details",
            "find_user_id_by_email",
            "web_search",
            "visit_page",
            "page_down",
            "inspect_file_as_text",
            "final_answer",
            "list_all_product_types",
            "think",
        ] {
            assert!(!name_says_action(name), "{name}");
        }
        assert!(tool_changes_state(&tool("lookup", None, true)));
        assert!(tool_changes_state(&tool(
            "order_tool",
            Some("Cancel a pending order. The order must be pending."),
            false
        )));
        // A look-up's description says what it gives back.
        assert!(!tool_changes_state(&tool(
            "weather",
            Some("Returns the weather for a city."),
            false
        )));
        assert!(!tool_changes_state(&tool("weather", None, false)));
    }

    #[test]
    fn a_tool_the_run_does_not_list_is_read_by_its_name() {
        let mut run = Run::new("r", RunStatus::Failed);
        run.tools
            .push(tool("lookup", Some("Look up an order."), false));
        assert!(!changes_state(&run, "lookup"));
        assert!(changes_state(&run, "refund_order"));
        assert!(!changes_state(&run, "get_order"));
    }
}
