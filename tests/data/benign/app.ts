type Pair<S, T> = { first: S; second: T };
const render = (items: Array<string>): string => items.map((i) => `<li>${i}</li>`).join("");
const App = () => (<><Header title="x" /><p>{1 < 2 ? "yes" : "no"}</p></>);
const pipeline = (x: number) => x |> double;  // proposal syntax
export default App;
