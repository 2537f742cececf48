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


def legacy_sequential():
    """The same kind of model with tf_keras (Keras 2), as code written before Keras 3 still builds it."""
    import tf_keras

    tf_keras.utils.set_random_seed(29)
    return tf_keras.Sequential([tf_keras.layers.InputLayer(input_shape=(16,), name="features"),
                                tf_keras.layers.Dense(32, activation="relu"), tf_keras.layers.Dense(5, name="scores")])
