"""The tracker application: persistence wiring, the service layer, the CLI and the demo."""
