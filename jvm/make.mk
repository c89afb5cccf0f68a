# JVM binding: the JNI crate sds-jni, the Maven build under jvm/ and the Java example.
MVN ?= mvn
MVN_FLAGS ?= -B -ntp
JVM_JAR := jvm/sds-native/target/sds-native-0.1.0.jar

TESTS += test-java
DEMOS += demo-java
BENCHES += bench-java

.PHONY: test-java demo-java bench-java jvm-jar

# Builds the native library through cargo (exec-maven-plugin), packs it into
# the jar and runs the JUnit suites of both modules.
test-java: servers
	$(MVN) $(MVN_FLAGS) -f jvm/pom.xml verify

jvm-jar:
	$(MVN) $(MVN_FLAGS) -q -f jvm/pom.xml -DskipTests -pl sds-native package

demo-java: jvm-jar
	java -cp $(JVM_JAR) examples/java/Demo.java
	java -cp $(JVM_JAR) examples/java/Shaping.java
	java -cp $(JVM_JAR) examples/java/Adaptive.java
	@# Shared.java starts worker JVMs of its own class: compiled, so they find it.
	javac -cp $(JVM_JAR) -d jvm/sds-native/target/examples examples/java/Shared.java
	java -cp $(JVM_JAR):jvm/sds-native/target/examples Shared
	@# WebApp.java runs the servlet filter in Jetty, a test-scope dependency: its classpath from Maven.
	$(MVN) $(MVN_FLAGS) -q -f jvm/pom.xml -pl sds-native dependency:build-classpath \
		-Dmdep.includeScope=test -Dmdep.outputFile=target/web-classpath.txt
	java -cp $(JVM_JAR):$$(cat jvm/sds-native/target/web-classpath.txt) examples/java/WebApp.java

# JMH: one fork, short iterations; prints ns/op and bytes/op (-prof gc).
bench-java: servers
	$(MVN) $(MVN_FLAGS) -q -f jvm/pom.xml -Pbench -DskipTests package
	java -jar jvm/bench/target/benchmarks.jar $(JMH_ARGS)
