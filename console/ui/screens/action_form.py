"""The parameter form of a guarded action: pre-filled (the drain planner, the fleet's settings), validated
as the operator types (the message names the field and its range), sent as a dry run or for real.

The form only shapes a call: it dismisses with an `ActionSubmission` (an intent), and the app sends it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from console.errors import InputError, MissingInput, quoted
from console.model.actions.answer import ActionReading
from console.model.actions.drain import DrainHintRule
from console.model.actions.form import (
    FORMS,
    PAIRED_FIELDS,
    ActionCall,
    Prefill,
    WindowOrderError,
    field_label,
    parse_form,
)
from console.protocol import ActionKind
from console.ui.widgets.field_input import FieldInput
from console.ui.widgets.footer import ConsoleFooter

#: A server names a [min, max] pair by its body name (hint_ms): the form's two fields for it.
_PAIR_FIELDS = tuple(PAIRED_FIELDS.values())


#: Quitting over a screen with input fields (this form, the verdict dialog's typed name). A modal screen
#: hides the app's `q`: it did nothing here, though help lists it "anywhere". Not a priority binding, so in
#: a field q is typed; elsewhere it is the app's quit (which asks again). Ctrl+Q (Textual's, a priority
#: binding) asks again from a field too: listed here so that help says which key does what.
QUIT_OVER_FIELDS: tuple[Binding, ...] = (
    Binding("ctrl+q", "app.quit", "quit (asks again: an action is open)", show=False),
    Binding("q", "app.quit", "off a field: quit (asks again); in a field it is typed", show=False),
)


@dataclass(frozen=True)
class ActionSubmission:
    call: ActionCall
    dry_run: bool


class FormField(FieldInput):
    """A form's field: its Enter (the Input's submit, which applies the form) said in the footer as such —
    the Input's own is hidden, and it hid the form's."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "submit", "apply")]


class ApplyButton(Button):
    """The form's Apply: its Enter said in the footer as the form's — a form with no fields (undrain,
    halt, resume) opens on it, and Textual's Button binds Enter hidden, which hid the form's "⏎ apply"."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "press", "apply")]


class ActionForm(ModalScreen[ActionSubmission | None]):
    DEFAULT_CSS = """
    ActionForm { align: center middle; }
    ActionForm > Vertical {
        width: 96; max-width: 100%; height: auto; border: thick $primary; background: $surface; padding: 0 1;
        /* Taller than the screen (the rollout form's six rows at 24 rows and 60 columns, its note wrapped),
           it scrolls inside: the screen scrolled, and its scrollbar cut the footer's keys. */
        max-height: 100%; overflow-y: auto;
    }
    ActionForm .row { height: auto; }
    ActionForm .row Label { width: 30; padding: 1 1 0 0; }
    ActionForm .row Input { width: 1fr; }
    ActionForm #form-title { text-style: bold; padding-bottom: 1; }
    ActionForm #form-source { color: $text-muted; }
    ActionForm #form-error { color: $error; height: auto; width: 100%; }
    ActionForm #form-buttons { height: auto; padding-top: 1; }
    ActionForm #form-buttons Button { margin-right: 2; }
    /* 24 rows: the admission form's five fields left its buttons' lower edge under the footer. */
    ActionForm.-short #form-title { padding-bottom: 0; }
    ActionForm.-short #form-buttons { padding-top: 0; }
    """
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]] | None] = [(0, "-short"), (30, "-tall")]
    BINDINGS: ClassVar[list[BindingType]] = [
        # Enter was said nowhere (footer: "^d dry run  esc cancel"). In a field, the field's own Enter
        # (`FormField`) applies; on a button, the button's Enter presses it; elsewhere this one applies.
        Binding("enter", "apply", "apply"),
        Binding("escape", "cancel", "cancel"),
        Binding("ctrl+d", "dry_run", "dry run", priority=True),  # above the inputs (delete-right)
        # Priority, so the focus moves before the keys behind Tab are handed out: as the screen's ordinary
        # binding it ran only once the field had taken them, and "Tab Tab 77" arriving in one read (a fast
        # typist, a slow ssh link) typed 77 into the first field.
        Binding("tab", "app.focus_next", "next field", show=False, priority=True),
        Binding("shift+tab", "app.focus_previous", "previous field", show=False, priority=True),
        *QUIT_OVER_FIELDS,
    ]

    def __init__(
        self,
        kind: ActionKind,
        node_id: str | None,
        prefill: Prefill,
        refusal: ActionReading | None = None,
        focus_id: str | None = None,
        hint_rule: DrainHintRule | None = None,
        hint_set: tuple[str, str] | None = None,
        hint_said: str = "",
    ) -> None:
        super().__init__()
        self.kind = kind
        self.node_id = node_id
        self.prefill = prefill
        self.refusal = refusal  # the server's 422 to what was sent from this form last
        self.focus_id = focus_id  # back from a dry run: where the operator was (not the first field)
        self.left_from: str | None = None  # the id of what had focus when the form was sent
        # A drain's hint window follows the rate while it holds what the console put there (the planner's,
        # or one re-derived here: `hint_set`, carried to the form that comes back); typed over, it stays.
        self.hint_rule = hint_rule
        values = prefill.values
        self.hint_set = hint_set or (values.get("hint_min_ms", ""), values.get("hint_max_ms", ""))
        # Why the window is not the pre-fill's, said as long as it holds the window re-derived (carried to
        # the form that comes back, as `hint_set`): back from a dry run the form showed hint max 9330 where
        # 2000 had been pre-filled, its note only the planner's "no safe rate now" (review).
        shown_hint = (values.get("hint_min_ms", ""), values.get("hint_max_ms", ""))
        self.hint_said = hint_said if shown_hint == self.hint_set else ""
        self._rate_seen = values.get("rate_per_s", "")
        self._answered = False

    def compose(self) -> ComposeResult:
        with Vertical():
            target = f" {self.node_id}" if self.node_id else ""
            yield Static(f"{self.kind.title}{target}", id="form-title")
            for spec in FORMS[self.kind]:
                with Horizontal(classes="row"):
                    yield Label(spec.label)
                    yield FormField(
                        self.prefill.values.get(spec.name, ""),
                        placeholder=spec.placeholder(spec.name in self.prefill.required),
                        id=f"field-{spec.name}",
                    )
            if not FORMS[self.kind]:
                yield Static("no parameters: the server judges it as it stands")
            yield Static(self._source_text(), id="form-source")
            yield Label("", id="form-error")
            with Horizontal(id="form-buttons"):
                yield Button("Dry run", id="dry-run", variant="default")
                yield ApplyButton("Apply", id="apply", variant="primary")
                yield Button("Cancel", id="cancel", variant="default")
        # The form's own keys, the last to give way: Esc cancel (the way out), Enter apply (a field's
        # `submit`, the Apply button's `press`, else the form's), Ctrl+D dry run.
        yield ConsoleFooter(essential=("cancel", "submit", "press", "apply", "dry_run"))

    def _source_text(self) -> str:
        """Where the values come from, and why the hint window moved where the console re-derived it."""
        return f"{self.prefill.source}\n{self.hint_said}" if self.hint_said else self.prefill.source

    def on_mount(self) -> None:
        first = self.query(Input).first() if self.query(Input) else None
        back_to = self.query(f"#{self.focus_id}") if self.focus_id else None
        (back_to.first() if back_to else first or self.query_one("#apply", Button)).focus()
        if self.refusal is not None:
            named = self.query(f"#field-{self.refusal.field_name}") if self.refusal.field_name else None
            if named:
                named.first().focus()
            self.query_one("#form-error", Label).update(f"✖ the server refused: {self.refusal.message}")

    def field_names(self) -> set[str]:
        """The fields an operator can change here (a refusal naming another goes to a notification)."""
        names = {spec.name for spec in FORMS[self.kind]}
        return names | {pair for pair, low, high in _PAIR_FIELDS if low in names and high in names}

    def values(self) -> dict[str, str]:
        return {spec.name: self.query_one(f"#field-{spec.name}", Input).value for spec in FORMS[self.kind]}

    def _untouched(self) -> bool:
        """Every field as pre-filled (a field the prefill leaves out: empty)."""
        return all(value == self.prefill.values.get(name, "") for name, value in self.values().items())

    def _as_sent(self) -> dict[str, str]:
        """What was typed, a choice in lower case: the rollout's mode is free text, and 'Drain' was refused
        as not 'drain or abrupt'."""
        choices = {spec.name for spec in FORMS[self.kind] if spec.choices}
        return {name: value.lower() if name in choices else value for name, value in self.values().items()}

    def validated(self, *, focus_bad: bool) -> ActionCall | None:
        """The call, or None with the first bad field named inline — and focused when `focus_bad` (on
        submit only: as the operator types, focus stays where the keys go)."""
        error_label = self.query_one("#form-error", Label)
        try:
            sent = self._as_sent()
            call = parse_form(self.kind, self.node_id, sent, self.prefill.check, self.prefill.required)
        except MissingInput as error:  # a setting the nodes run differently: blank would lift theirs
            error_label.update(f"✖ {field_label(self.kind, error.field)} is required: {error.allowed}")
            field = self.query(f"#field-{error.field}")
            if focus_bad and field:
                field.first().focus()
            return None
        except WindowOrderError as error:
            # Both ends named, neither blamed (nor focused): either may be the one to change.
            error_label.update(f"✖ {error}")
            return None
        except InputError as error:
            label = field_label(self.kind, error.field)
            # An empty field read "rate (closes/s): '' is not allowed": quote marks no one typed.
            given = " is empty" if error.value in ("", None) else f": {quoted(error.value)} is not allowed"
            error_label.update(f"✖ {label}{given}; expected {error.allowed}")
            field = self.query(f"#field-{error.field}")
            if focus_bad and field:
                field.first().focus()
            return None
        error_label.update("")
        return call

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "field-rate_per_s":
            self._follow_rate(event.value)
        if self.is_mounted and self._untouched():
            # The pre-filled values arriving (or typed back): nothing of the operator's to judge yet. Keep
            # the server's words to what was sent; else say nothing — a drain with no safe rate (the note
            # says why) opened on "✖ rate: '' is not allowed". Submitting judges the form as it stands.
            if self.refusal is None:
                self.query_one("#form-error", Label).update("")
            return
        # Inline: the message follows the typing, the focus does not. Moving it to the first bad field on
        # every keystroke sent the next keys into that field (rate emptied, Tab, "900": deadline "9",
        # rate "00").
        self.validated(focus_bad=False)

    def _follow_rate(self, rate_text: str) -> None:
        """The rate changed: re-derive the hint window if the operator has not touched it."""
        if self.hint_rule is None or rate_text == self._rate_seen:
            return  # (the pre-filled rate arriving is no change)
        self._rate_seen = rate_text
        low_field = self.query_one("#field-hint_min_ms", Input)
        high_field = self.query_one("#field-hint_max_ms", Input)
        if (low_field.value, high_field.value) != self.hint_set:
            return  # the operator's own window
        try:
            rate = next(f for f in FORMS[self.kind] if f.name == "rate_per_s").parse(rate_text)
        except InputError:
            return  # (the inline message says why; the window waits for a rate)
        assert isinstance(rate, float)
        low, high = self.hint_rule.for_rate(rate)
        self.hint_set = (str(low), str(high))
        low_field.value, high_field.value = self.hint_set
        self.hint_said = (
            f"hint window re-derived for {rate:g} closes/s as the planner does: {self.hint_rule.describe()}"
        )
        self.query_one("#form-source", Static).update(self._source_text())

    def on_input_submitted(self, _: Input.Submitted) -> None:
        self._submit(dry_run=False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "cancel":
            self._close(None)
        else:
            self._submit(dry_run=event.button.id == "dry-run")

    def action_dry_run(self) -> None:
        # Ctrl+D is a priority binding: it runs as it arrives, before the focused field has taken the keys
        # ahead of it ("0" and Ctrl+D in one read dry-ran the 1 that was there). Queued behind them in the
        # field's own queue, it judges what was typed.
        if isinstance(self.focused, Input):
            self.focused.call_later(self._submit, dry_run=True)
        else:
            self._submit(dry_run=True)

    def action_apply(self) -> None:
        self._submit(dry_run=False)

    def action_cancel(self) -> None:
        self._close(None)

    def _submit(self, *, dry_run: bool) -> None:
        if self.hint_rule is not None:
            # The hint follows the rate as sent: the rate's Changed may not have bubbled here yet.
            self._follow_rate(self.query_one("#field-rate_per_s", Input).value)
        call = self.validated(focus_bad=True)  # sent: now the first bad field is where to go
        if call is None:
            return
        same = self.prefill.unchanged(call.body) if self.prefill.unchanged and not dry_run else None
        if same is not None:
            # Said here, nothing sent: Enter on the untouched admission form applied, and audited, an empty
            # change (found in review). A dry run still judges the settings as they stand (the footer says
            # Ctrl+D): one line, which 80×24 has room for under the admission form's five fields.
            self.query_one("#form-error", Label).update(f"▲ {same}")
            return
        self._close(ActionSubmission(call, dry_run))

    def _close(self, result: ActionSubmission | None) -> None:
        """Once: a second Enter in the same moment (key repeat, a busy machine) dismissed the form again
        after its request had left, and the console crashed (ScreenStackError) instead of saying what
        was applied."""
        if not self._answered:
            self._answered = True
            self.left_from = self.focused.id if self.focused is not None else None
            self.dismiss(result)
