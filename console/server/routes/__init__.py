"""The fleet API's routes, one module per area; #4 adds the actions and the audit log beside these."""
