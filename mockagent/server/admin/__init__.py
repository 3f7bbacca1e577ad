"""The admin API under `/_mockagent/` (api), its framework-free views and actions (control,
interaction_ops) and the inspector page (inspector, templates/). Importing the package imports
nothing."""
