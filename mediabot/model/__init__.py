"""The model client: the OpenAI-compatible chat call (``chat``), what server answers
(``server_probe``), llama.cpp's slot pins (``slots``) and the token calibration
(``calibration``). Below the conversation, which asks it for each turn."""
