package org.fanstore.bench; final class Placeholder { private Placeholder() {} }
