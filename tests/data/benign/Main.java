import java.util.*;

public class Main<S extends Comparable<S>> {
    private final Map<String, List<Integer>> index = new HashMap<>();

    public static <T> List<T> of(T... xs) { return new ArrayList<>(Arrays.asList(xs)); }

    public static void main(String[] args) {
        List<String> xs = new ArrayList<>();
        if (xs.size() < 3 && args.length >= 0) System.out.println("<ok>");
        String html = "<p class=\"x\">hi</p>";
        int shifted = 1 << 3 >>> 1;
    }
}
