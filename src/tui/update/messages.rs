//! Messages from the TUI: `m` writes to the selected agent, `A` answers an agent that waits for
//! a human. An answer is a `send` with `answer: true` (the board ends the wait in the same
//! transaction and logs it); when the agent runs in a tmux pane, the TUI then types the answer
//! into that pane too (`tmux send-keys -l`, then Enter), for a prompt that reads the terminal.

use crate::proto::methods::SendResult;
use crate::proto::methods::{Call, SendParams};
use crate::tui::state::app::{App, Effect, Purpose, Request};
use crate::tui::state::form::{Field, Form, FormKind, Recipient};
use crate::tui::state::snapshot::AgentItem;

pub use crate::agent_tools::team::tmux::pane_text;

/// Label of the message field.
pub const MESSAGE: &str = "Message";
/// Label of the "type it into the agent's pane too" field (`y`/`n`).
pub const INTO_PANE: &str = "Type it into its pane too (y/n)";

/// The form `m` (a message to the selected agent) or `A` (an answer: to the selected agent when
/// it waits, else to the first agent that waits) opens. Errors: the flash text when there is
/// no such agent.
pub fn recipient(app: &App, answer: bool) -> Result<FormKind, String> {
    let live = |a: &&AgentItem| a.view.ended_at.is_none();
    let selected = app.agents.get(app.agent_selected).filter(live);
    if !answer {
        return selected
            .map(|a| form_kind(a, false))
            .ok_or_else(|| "no live agent selected (Tab to the agents, j/k to pick one)".into());
    }
    selected
        .filter(|a| a.question.is_some())
        .or_else(|| app.waiting().next())
        .map(|a| form_kind(a, true))
        .ok_or_else(|| "no agent is waiting for you".into())
}

/// The form for a message to `agent` (an answer when `answer` and it is waiting).
pub fn form_kind(agent: &AgentItem, answer: bool) -> FormKind {
    FormKind::Message(Box::new(Recipient {
        to: agent.view.id.clone(),
        name: agent.name.clone(),
        question: agent.question.clone().filter(|_| answer),
    }))
}

/// The form's fields: the text, and for an answer, whether to type it into the agent's pane
/// too (default no; the board's answer to `send` says which pane, if any).
pub fn fields(r: &Recipient) -> Vec<Field> {
    let mut f = vec![Field::new(MESSAGE, "")];
    if r.question.is_some() {
        // Off unless the person says so: typed text is input to whatever reads the terminal,
        // and a shell at its prompt would run the answer as a command.
        f.push(Field::new(INTO_PANE, "n"));
    }
    f
}

/// The `send` call of a filled-in form, and the text to type into the agent's pane once the
/// board has stored it (None: do not type). Errors: the message is empty, or `Into pane` is
/// neither y nor n.
pub fn build(form: &Form, r: &Recipient) -> Result<(Request, Option<String>), String> {
    let text = form.value(MESSAGE).trim().to_string();
    if text.is_empty() {
        return Err("a message needs text".into());
    }
    let into_pane = match form.value(INTO_PANE).trim() {
        "" if r.question.is_none() => false,
        "y" | "Y" | "yes" => true,
        "n" | "N" | "no" | "" => false,
        other => return Err(format!("type it into its pane too: y or n, not {other:?}")),
    };
    let answer = r.question.is_some();
    let typing = into_pane.then(|| pane_text(&text));
    Ok((
        Request {
            purpose: Purpose::Send,
            call: Call::Send(SendParams {
                to: r.to.clone(),
                text,
                answer: Some(answer),
            }),
        },
        typing,
    ))
}

/// The flash after a `send` answer, and what to type where (`typing`: the text from
/// [`build`]; typed only when the board says the agent has a pane).
pub fn after_send(v: &SendResult, typing: Option<String>) -> (String, Option<Effect>) {
    let to = &v.message.to;
    let text = if v.ended_wait {
        format!("answered {to}: the answer is in its inbox and its wait ended")
    } else {
        format!("sent to {to}: it is told on its next board call")
    };
    let typed = match (v.pane.as_deref(), typing) {
        (Some(pane), Some(text)) if !pane.is_empty() && !text.is_empty() => {
            Some(Effect::TypeIntoPane {
                pane: pane.to_string(),
                text,
            })
        }
        _ => None,
    };
    (text, typed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_forms_pane_field_says_what_it_does_and_what_it_takes() {
        let r = Recipient {
            to: "claude-1".into(),
            name: "claude".into(),
            question: Some("Which store?".into()),
        };
        let labels: Vec<&str> = fields(&r).iter().map(|f| f.label).collect();
        assert_eq!(labels, [MESSAGE, "Type it into its pane too (y/n)"]);
        let plain = Recipient {
            to: "claude-1".into(),
            name: "claude".into(),
            question: None,
        };
        assert_eq!(fields(&plain).len(), 1, "a plain message types nothing");
    }
}
