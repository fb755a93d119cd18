package org.fanstore.runtime; final class Placeholder { private Placeholder() {} }
