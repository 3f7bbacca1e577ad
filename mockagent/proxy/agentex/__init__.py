"""Recording an Agentex platform: the recording and its turns (recording), and the platform's own
answers to task/create and task/cancel (tasks). Importing the package imports nothing."""
