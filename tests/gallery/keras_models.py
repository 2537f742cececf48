"""The Keras model of the gallery (case 11): Dense → Dropout → Dense softmax, random weights."""

import tensorflow as tf


def classifier():
    tf.keras.utils.set_random_seed(11)
    inputs = tf.keras.Input(shape=(16,), name="features")
    x = tf.keras.layers.Dense(32, activation="relu")(inputs)
    x = tf.keras.layers.Dropout(0.5)(x)
    outputs = tf.keras.layers.Dense(5, activation="softmax", name="probabilities")(x)
    return tf.keras.Model(inputs, outputs)


def sequential():
    """A Keras 3 Sequential model (tf2onnx's from_keras fails on these: KeyError 'keras_tensor_N')."""
    import keras

    keras.utils.set_random_seed(26)
    return keras.Sequential([keras.layers.Input((16,), name="features"), keras.layers.Dense(32, activation="relu"),
                             keras.layers.Dense(5, name="scores")])
