/*
 * Runs Kafka's command-line tools (TopicCommand, ConfigCommand,
 * MetadataQuorumCommand, ...) one after another in one JVM, for the
 * real-Kafka workload (tests/realkafka/tool_jvm.py): a JVM's start and the
 * loading of the admin client's classes are paid once per cluster, not once
 * per command. Compiled without Kafka on the class path: Kafka's Exit class
 * is found by name (it moved to ...utils.internals in 4.x).
 *
 * Protocol, one request per line on stdin: OUT_FILE TAB MAIN_CLASS (TAB ARG)*.
 * The tool's System.out (and Scala's Console, which captured it) goes to
 * OUT_FILE, its System.err to OUT_FILE.err; when main returns or calls
 * Exit.exit(code), the server answers "exit CODE" on its own stdout. A
 * tool that throws answers "exit 1" with the stack trace in OUT_FILE.err.
 * Exit.exit throws, and some tools catch what their own code throws (an exit
 * in a finally block inside a catch-all): as in a JVM that has ended, the
 * first exit's code is the answer and nothing printed after it is kept.
 * The server ends at the end of stdin.
 */
import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

public final class ToolServer {
    private static final String[] EXIT_CLASSES = {
        "org.apache.kafka.common.utils.internals.Exit", "org.apache.kafka.common.utils.Exit"};

    /** Thrown in place of exiting the JVM: the tool's exit code. */
    static final class ToolExit extends RuntimeException {
        final int code;

        ToolExit(int code) {
            super("exit " + code, null, false, false);
            this.code = code;
        }
    }

    /** An output stream whose target changes per request. */
    static final class Switch extends OutputStream {
        private OutputStream target = OutputStream.nullOutputStream();

        synchronized void to(OutputStream next) {
            target = next;
        }

        @Override public synchronized void write(int b) throws IOException {
            target.write(b);
        }

        @Override public synchronized void write(byte[] b, int off, int len) throws IOException {
            target.write(b, off, len);
        }

        @Override public synchronized void flush() throws IOException {
            target.flush();
        }
    }

    private static final Switch out = new Switch();
    private static final Switch err = new Switch();
    /** The code of the request's first Exit.exit, or null. */
    private static Integer exited;

    public static void main(String[] args) throws Exception {
        PrintStream answers = System.out;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        exitByThrowing();
        BufferedReader requests = new BufferedReader(
            new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = requests.readLine()) != null; ) {
            String[] words = line.split("\t", -1);
            int code;
            try (FileOutputStream o = new FileOutputStream(words[0]);
                 FileOutputStream e = new FileOutputStream(words[0] + ".err")) {
                out.to(o);
                err.to(e);
                exited = null;
                code = run(words[1], Arrays.copyOfRange(words, 2, words.length));
                silence();
            }
            answers.println("exit " + code);
            answers.flush();
        }
    }

    /** Kafka's Exit.exit throws ToolExit instead of ending the JVM. */
    private static void exitByThrowing() throws ReflectiveOperationException {
        for (String name : EXIT_CLASSES) {
            Class<?> exit;
            try {
                exit = Class.forName(name);
            } catch (ClassNotFoundException e) {
                continue;
            }
            Class<?> procedure = Class.forName(name + "$Procedure");
            Object thrower = Proxy.newProxyInstance(procedure.getClassLoader(),
                new Class<?>[] {procedure}, (proxy, method, arguments) -> {
                    switch (method.getName()) {
                        case "execute": throw exit((Integer) arguments[0]);
                        case "equals": return proxy == arguments[0];
                        case "hashCode": return System.identityHashCode(proxy);
                        default: return "ToolServer's exit procedure";
                    }
                });
            exit.getMethod("setExitProcedure", procedure).invoke(null, thrower);
            return;
        }
        throw new ClassNotFoundException("none of " + Arrays.toString(EXIT_CLASSES));
    }

    /** What Exit.exit(code) does here: the first one ends the request's output. */
    private static ToolExit exit(int code) {
        if (exited == null) {
            exited = code;
            silence();
        }
        return new ToolExit(code);
    }

    private static void silence() {
        System.out.flush();
        System.err.flush();
        out.to(OutputStream.nullOutputStream());
        err.to(OutputStream.nullOutputStream());
    }

    /** The tool's exit code: its first Exit.exit's, else 0 when main returns. */
    private static int run(String mainClass, String[] args) {
        int code = 0;
        try {
            Method main = Class.forName(mainClass).getMethod("main", String[].class);
            main.invoke(null, (Object) args);
        } catch (InvocationTargetException e) {
            if (!(e.getCause() instanceof ToolExit)) {
                e.getCause().printStackTrace();
                code = 1;
            }
        } catch (ReflectiveOperationException e) {
            e.printStackTrace();
            code = 1;
        }
        return exited != null ? exited : code;
    }
}
