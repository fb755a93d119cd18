package org.fanstore.launcher; final class Placeholder { private Placeholder() {} }
