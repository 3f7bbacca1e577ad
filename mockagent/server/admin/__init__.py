"""The admin API under `/_mockagent/` (api), its framework-free views and actions (control,
runtime) and the inspector page (inspector, templates/). Importing the package imports nothing."""
