"""LiteRT (formerly TensorFlow Lite) models for devices, in one place: `conversion` (a model's
function as a `.tflite` flatbuffer), `metadata` (the TFLite metadata that names the tokenizer and
labels), `mediapipe` (MediaPipe Tasks' `TextClassifier` and `TextEmbedder` forms), `task_library`
(the TFLite Task Library's `BertQuestionAnswerer` form) and `publish` (writing a set of `.tflite`
files all or none, cleaning what a killed export left). TF Serving's `model.tflite` is apart:
`albert_tf.serving.serving_tflite`."""
