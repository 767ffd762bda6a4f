"""Guarded actions as the console sees them: which call each key makes, its form, and what the answer means.

Pure: no I/O, no clocks. The server judges (issue #4): these modules only shape the request, validate the
operator's typing before anything is sent (naming the field and its range, as the server would), read the
server's answer into an `ActionAnswer`, and say what would pass when a guard blocks. Import from the module
that owns a name; this package re-exports none:

- `form`: each action kind's form fields (the kinds are `console.protocol.ActionKind`), parsing the typed
  form into a call, and `Prefill`;
- `drain`, `rollout`, `admission`, `capacity`: each form's starting values (and the drain plan's words);
- `thresholds`: the lines those values are computed with — the server's (`GET /v1/thresholds`), else the
  console's own, saying so;
- `refusals`: why an action could only be refused before anything is sent, or none is offered at all;
- `answer`: the server's answer read, and a verdict's checks and what would pass.
"""
