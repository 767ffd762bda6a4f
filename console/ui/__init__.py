"""The Textual console: renders the model, posts the operator's intents."""
