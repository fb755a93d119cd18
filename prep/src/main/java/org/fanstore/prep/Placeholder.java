package org.fanstore.prep; final class Placeholder { private Placeholder() {} }
