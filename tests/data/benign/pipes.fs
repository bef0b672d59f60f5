// F# and Elm style pipes
let result = [1; 2; 3] |> List.map (fun x -> x * 2) |> List.sum
let shout = printfn "%s" <| String.concat "" ["a"; "b"]
-- Elm: view model = Html.text <| String.fromInt model
-- Haskell: parser = a <|> b <|> c
